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

UNWOUND_TYPES = frozenset({"step"})  # "a timer is never part of an unwind" (and waits, ...)


def derived_id(prefix: str, *facts: object) -> str:
    """An identity derived from durable facts: `prefix-` + 16 hex of their canonical hash."""
    digest = hashlib.sha256(canonical_bytes(list(facts))).hexdigest()
    return f"{prefix}-{digest[:16]}"


def operation_id(run_id: str, step_id: str, phase: str) -> str:
    """`op:<run>:<phase>:<step>`: one logical operation, the same for all its attempts."""
    return f"op:{run_id}:{phase}:{step_id}"


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

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

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
            self.operations[key] = Operation(
                operation_id(self.run_id, step_id, phase),
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
        return report
