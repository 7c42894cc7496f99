"""Durable run state: history, persisted declarations, operations, and derived identities.

RFD 2: "Callbacks are never serialized into server storage." The store holds protocol values
only: tagged values, error records, declarations as the SDK sent them, and identities derived
from durable facts, never from time or process state.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from fakepeer.protocol.canonical import canonical_bytes
from fakepeer.server.retry import RetryPolicy

#: Run statuses (docs/server.md): live ones, then terminal ones.
RUNNING = "running"
COMPENSATING = "compensating"
BLOCKED = "blocked"
COMPLETED = "completed"
FAILED = "failed"
COMPENSATION_FAILED = "compensation_failed"
TIMED_OUT = "timed_out"
CANCELLED = "cancelled"
ERROR = "error"
TERMINAL = frozenset({COMPLETED, FAILED, COMPENSATION_FAILED, TIMED_OUT, CANCELLED, ERROR})

#: The §7.3 capability each declaration kind needs of the worker that replays it.
CAPABILITY_OF = {
    "timer": "timers",
    "wait": "event_waits",
    "invoke": "child_invocations",
    "emit": "event_emission",
}

UNWOUND_TYPES = frozenset({"step"})  # "a timer is never part of an unwind" (and waits, ...)


def derived_id(prefix: str, *facts: object) -> str:
    """An identity derived from durable facts: `prefix-` + 16 hex of their canonical hash."""
    digest = hashlib.sha256(canonical_bytes(list(facts))).hexdigest()
    return f"{prefix}-{digest[:16]}"


def server_error(category: str, message: str) -> dict:
    """An error record the server itself settles a step or run with (protocol §5)."""
    return {"category": category, "message": message, "retryable": False, "details": {}}


def operation_id(run_id: str, step_id: str, phase: str, incarnation: int = 1) -> str:
    """`op:<run>:<phase>:<step>`: one logical operation, the same for all its attempts.

    A step declared again after its forward target went obsolete is new durable work, so a new
    operation (D-ATTEMPT-IDENTITY, docs/decisions.md): its id derives from the same facts plus
    the declaration's ordinal, and its attempts count from 1 again; the pair (operation id,
    attempt) never names two physical attempts.
    """
    if incarnation == 1:
        return f"op:{run_id}:{phase}:{step_id}"
    return derived_id("op", run_id, phase, step_id, incarnation)


@dataclass
class Operation:
    """One logical forward or compensation operation across its physical attempts.

    RFD 2: "The operation ID identifies the logical forward or compensation operation across
    physical attempts; the attempt ordinal identifies one physical attempt."
    """

    operation_id: str
    step_id: str
    phase: str  # "forward" or "compensation"
    policy: RetryPolicy
    attempt: int = 1
    obsolete: bool = False
    #: The virtual instant the next attempt is due at, while one is scheduled (durable: a
    #: server restart schedules it again at that instant); None while none is.
    due_ms: int | None = None


@dataclass
class RunState:
    """One run: its input, accepted history, declarations and where it stands."""

    run_id: str
    function_id: str
    input: dict
    created_ms: int
    deadline_ms: int | None = None
    deadline_source: str | None = None  # "function", "invoke" or "parent"
    parent: tuple[str, str] | None = None  # (parent run, step) for a child run
    status: str = RUNNING
    value: dict | None = None
    error: dict | None = None
    history: dict[str, dict] = field(default_factory=dict)
    declarations: dict[str, dict] = field(default_factory=dict)
    accepted_ms: dict[str, int] = field(default_factory=dict)
    completion_order: list[str] = field(default_factory=list)
    operations: dict[tuple[str, str], Operation] = field(default_factory=dict)
    unwind: list[str] = field(default_factory=list)
    compensated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    blocker: dict | None = None
    #: The (step, phase) of the operation whose target answered definition_blocked, while the
    #: run is blocked on it; None for a blocked discovery. Durable: a code change resumes the
    #: run there, so a run blocked mid-unwind goes on unwinding (D-BLOCKED-UNWIND).
    blocked_on: tuple[str, str] | None = None
    #: Armed timers not yet woken: step -> the instant recorded at acceptance (durable).
    timers: dict[str, int] = field(default_factory=dict)
    #: How many forward operations each step has had (a re-declared obsolete step: a new one).
    incarnations: dict[str, int] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def unwinding(self) -> bool:
        """Whether the run is undoing a failure: compensating, or blocked on a compensation
        target (it has not stopped unwinding, it waits for a code change to go on)."""
        if self.status == BLOCKED:
            return self.blocked_on is not None and self.blocked_on[1] == "compensation"
        return self.status == COMPENSATING

    def required_capabilities(self) -> set[str]:
        """The protocol capabilities (§7.3) the run's durable history needs of a worker: each
        declaration kind it recorded, and compensation once a step declared a compensator or
        the run unwinds (RFD 2: routing "excludes workers that cannot satisfy the current
        contract and durable history requirements")."""
        needed = {
            CAPABILITY_OF[declaration["type"]]
            for declaration in self.declarations.values()
            if declaration.get("type") in CAPABILITY_OF
        }
        if self.unwinding or any(
            declaration.get("has_compensation") for declaration in self.declarations.values()
        ):
            needed.add("compensation")
        return needed

    def history_list(self) -> list[dict]:
        """Accepted step results and terminal step failures, in acceptance order (§9.1)."""
        return list(self.history.values())

    def settle(self, step_id: str, entry: dict) -> None:
        """Accept a step's result or terminal failure; completed `step`s join the unwind order."""
        self.history[step_id] = {"step_id": step_id, **entry}
        declaration = self.declarations.get(step_id, {})
        if entry["status"] == "completed" and declaration.get("type") in UNWOUND_TYPES:
            self.completion_order.append(step_id)  # a step settles once: history is keyed by it

    def operation(self, step_id: str, phase: str) -> Operation:
        """The step's operation of `phase`, created with a stable id on first use."""
        key = (step_id, phase)
        if key not in self.operations:
            declaration = self.declarations.get(step_id, {})
            incarnation = self.incarnations.get(step_id, 1) if phase == "forward" else 1
            self.operations[key] = Operation(
                operation_id(self.run_id, step_id, phase, incarnation),
                step_id,
                phase,
                RetryPolicy.from_declaration(declaration.get("retry")),
            )
        return self.operations[key]

    def summary(self) -> dict[str, Any]:
        """The run's outcome as plain JSON (for timelines and scenario comparison)."""
        report: dict[str, Any] = {"run_id": self.run_id, "function_id": self.function_id}
        report["status"] = self.status
        if self.value is not None:
            report["value"] = self.value
        if self.error is not None:
            report["error"] = self.error
        if self.blocker is not None:
            report["blocker"] = self.blocker
        report["compensated"] = list(self.compensated)
        report["skipped"] = list(self.skipped)
        report["deadline_ms"] = self.deadline_ms
        report["deadline_source"] = self.deadline_source
        return report
