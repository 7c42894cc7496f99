"""The run loop: discovery, targeted execution, retries, compensation, timers, waits, children,
emissions and faults, driven on the virtual clock against one conformance host.

Rule ids in brackets (`[S12]`) name the RFD 2 sentence each behaviour implements: see
`rules.RULES`. Decisions RFD 2 leaves open are in docs/server.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fakepeer.protocol.canonical import canonical_bytes
from fakepeer.protocol.limits import MAX_VALUE_BYTES
from fakepeer.protocol.manifest import ManifestStore
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.server.clock import Scheduler, VirtualClock
from fakepeer.server.events import AcceptedEvent, EventLog, Wait
from fakepeer.server.host import BoundReached, HostFault, HostLink
from fakepeer.server.policy import (
    DEFAULT_MAX_INVOCATIONS,  # noqa: F401 - re-exported
    ServerPolicy,
)
from fakepeer.server.releases import Connection, ReleaseRegistry, Requirement, phantom_body
from fakepeer.server.retry import ADMISSION_RETRY_MS
from fakepeer.server.script import Fault, ScriptItem
from fakepeer.server.state import (
    BLOCKED,
    CANCELLED,
    COMPENSATING,
    COMPENSATION_FAILED,
    COMPLETED,
    ERROR,
    FAILED,
    RUNNING,
    TIMED_OUT,
    Operation,
    RunState,
    derived_id,
)
from fakepeer.server.timeline import Entry, Timeline
from fakepeer.session.effects import check_delivered, check_invariants

ROOT_RUN_ID = "run-1"

_TARGETED_ANSWERS = {
    "forward": ("step_completed", "step_failed"),
    "compensate": ("compensation_completed", "compensation_failed"),
}
_ALLOWED = {
    "discover": {"declared", "completed", "failed", "definition_blocked"},
    "forward": {
        "step_completed",
        "step_failed",
        "target_not_found",
        "rejected_before_start",
        "definition_blocked",
    },
    "compensate": {
        "compensation_completed",
        "compensation_failed",
        "target_not_found",
        "rejected_before_start",
        "definition_blocked",
    },
}


def _declared_step(answer: dict) -> str | None:
    """The step a discovery's `declared` answer names (None for other answers)."""
    if answer.get("kind") != "declared":
        return None
    return answer["body"]["declaration"].get("step_id")


def server_error(category: str, message: str) -> dict:
    """An error record the server itself settles a step or run with (protocol §5)."""
    return {"category": category, "message": message, "retryable": False, "details": {}}


@dataclass
class RunReport:
    """Everything a simulation produced: the runs, the timeline, the events, the clock."""

    root: RunState
    runs: dict[str, RunState]
    aliases: dict[str, str]
    timeline: Timeline
    events: list[AcceptedEvent]
    elapsed_ms: int
    invocations: int
    stopped: str | None = None
    host_fault: str | None = None

    def callbacks(self) -> dict[str, int]:
        """How many times each callback started, `<run> <step> <phase>`, from the traces."""
        counts: dict[str, int] = {}
        for entry in self.timeline.invocations():
            for event in entry.trace or ():
                if event.get("event") == "started":
                    key = f"{entry.run} {event['step_id']} {event['phase']}"
                    counts[key] = counts.get(key, 0) + 1
        return counts

    def outcome(self) -> dict[str, Any]:
        """The root run's outcome as compared by lifecycle scenarios."""
        root = self.root
        outcome: dict[str, Any] = {"status": root.status}
        if root.value is not None:
            outcome["value"] = root.value
        if root.error is not None:
            outcome["error"] = root.error
        outcome["compensation"] = list(root.compensated)
        outcome["skipped"] = list(root.skipped)
        return outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome(),
            "runs": {self.aliases[run_id]: run.summary() for run_id, run in self.runs.items()},
            "timeline": [entry.to_json() for entry in self.timeline.entries],
            "events": [
                {
                    "event_id": event.event_id,
                    "name": event.name,
                    "metadata": event.metadata,
                    "accepted_ms": event.accepted_ms,
                    "source": event.source,
                }
                for event in self.events
            ],
            "callbacks": self.callbacks(),
            "elapsed_ms": self.elapsed_ms,
            "invocations": self.invocations,
            "stopped": self.stopped,
            "host_fault": self.host_fault,
        }


@dataclass
class _Env:
    scope: dict = field(default_factory=lambda: dict(CONFORM_SCOPE))
    functions: dict[str, int | None] = field(default_factory=dict)  # id -> timeout_ms


class ModelServer:
    """Plays Ryusen's run loop against one host. One instance runs one simulation."""

    def __init__(
        self,
        link: HostLink,
        *,
        max_invocations: int = DEFAULT_MAX_INVOCATIONS,
        keep_frames: bool = False,
        policy_timeout_ms: int | None = None,
        trace: bool = False,
        policy: ServerPolicy | None = None,
        root_run_id: str = ROOT_RUN_ID,
    ) -> None:
        self.link = link
        #: The id of the run `simulate` starts: a lifecycle scenario names its own
        #: (`run-<fixture id>`), so state a host keeps per run never crosses scenarios.
        self.root_run_id = root_run_id
        #: Ask the host for its effect trace after every answered invocation (§12.4).
        self.trace = trace
        self.policy = policy or ServerPolicy(default_timeout_ms=policy_timeout_ms)
        self.policy_timeout_ms = self.policy.default_timeout_ms
        self.releases = ReleaseRegistry()
        link.on_start = self._register_worker
        self.clock = VirtualClock()
        self.scheduler = Scheduler(self.clock)
        self.events = EventLog()
        self.store = ManifestStore(self.policy.max_timeout_ms)
        self.env = _Env()
        self.runs: dict[str, RunState] = {}
        self.aliases: dict[str, str] = {}
        self.timeline = Timeline(keep_frames=keep_frames)
        self.faults: list[Fault] = []
        self.max_invocations = max_invocations
        self.invocations = 0
        self.fencing = 0
        self._discovering: set[str] = set()
        self._pending: dict[str, list] = {}
        self._stopped: str | None = None
        #: `time.monotonic()` past which the run stops (`simulate --max-time`), and why.
        self.stop_at: float | None = None
        self.stop_reason = "stopped: the time bound was reached"
        self._host_fault: str | None = None
        self._queued: list[Any] = []
        #: Instance ids of the workers the scenario registered besides the host (never fit).
        self.phantoms: set[str] = set()
        self._host_instance: str | None = None

    # ================================================================= entry point

    def simulate(
        self,
        function_id: str,
        input_value: dict,
        script: Iterable[ScriptItem] = (),
        faults: Iterable[Fault] = (),
    ) -> RunReport:
        """Publish the host's registry, start one run, play it (and what it causes) to the end."""
        self.faults = list(faults)
        try:
            self._publish()
            if self.store.active_generation(self.env.scope) is None:
                return self._rejected_publication(function_id, input_value)
            for index, item in enumerate(script):  # at 0: before the run's first discovery
                self.scheduler.at(
                    self.clock.start_ms + item.at_ms,
                    lambda item=item, index=index: self._script(item, index),
                    f"script {item.kind}",
                )
            self._new_run(self.root_run_id, "main", function_id, input_value)
            while self._stopped is None and self.scheduler.run_next():
                if self.invocations >= self.max_invocations:
                    self._stopped = f"stopped after {self.invocations} invocations"
                elif self.stop_at is not None and time.monotonic() >= self.stop_at:
                    self._stopped = self.stop_reason
        except BoundReached as exc:
            if self.stop_at is None:  # no bound of the caller's: the host took too long
                self._fault(str(exc), function_id, input_value)
            else:  # the caller's bound cut an exchange short: stopped, as between exchanges
                self._stopped = self.stop_reason
                self._root(function_id, input_value)
        except HostFault as exc:
            self._fault(str(exc), function_id, input_value)
        return self._report()

    def _fault(self, reason: str, function_id: str, input_value: dict) -> None:
        """The host broke the run: every run not yet ended is in error, the root notes why."""
        self._host_fault = reason
        root = self._root(function_id, input_value)
        for run in self.runs.values():
            if not run.terminal:
                run.status = ERROR
        self._note(root, f"host fault: {reason}")

    def _root(self, function_id: str, input_value: dict) -> RunState:
        """The root run, made when the run ended before it was created (a fault in publishing)."""
        root = self.runs.get(self.root_run_id)
        if root is None:
            root = RunState(self.root_run_id, function_id, input_value, self.clock.now_ms)
            self.runs[self.root_run_id] = root
            self.aliases[self.root_run_id] = "main"
        return root

    def _report(self) -> RunReport:
        return RunReport(
            root=self.runs[self.root_run_id],
            runs=self.runs,
            aliases=self.aliases,
            timeline=self.timeline,
            events=self.events.events,
            elapsed_ms=self.clock.elapsed_ms,
            invocations=self.invocations,
            stopped=self._stopped,
            host_fault=self._host_fault,
        )

    def _rejected_publication(self, function_id: str, input_value: dict) -> RunReport:
        """Activation rejected the manifest (a run timeout above the policy maximum [S47]):
        nothing is active, so no run can be created; the report's root records why."""
        root = self._root(function_id, input_value)
        root.error = server_error(
            "server.manifest_rejected", "activation rejected the manifest: timeout_above_maximum"
        )
        root.status = ERROR
        self._note(root, "manifest rejected: a run timeout above the policy maximum")
        return self._report()

    def _publish(self) -> None:
        """Learn the registry (function timeouts) from the host's own publication [S35]."""
        if self.link.register_body is not None:
            self._register_worker(self.link.register_body)
        manifest = self.link.publish(self.store)
        for function in manifest.get("functions", []):
            timeout = function.get("timeout_ms")
            self.env.functions[function["id"]] = int(timeout) if timeout is not None else None

    def _register_worker(self, body: dict) -> None:
        """A (re)connected worker: its release keeps its commit position [S52, S53]; work
        queued for lack of a worker is offered again."""
        if body.get("instance_id") not in self.phantoms:
            self._host_instance = body.get("instance_id")
        self.releases.register(self.env.scope, body)
        queued, self._queued = self._queued, []
        for action in queued:
            self.scheduler.soon(action, "queued work")

    def _worker_for(self, run: RunState, action: Any) -> Connection | None:
        """The compatible live worker with a free slot that takes the run's next work; if none,
        the work stays durable and queued until one registers [S58, S60]. The run's durable
        history requires the capabilities its declarations used."""
        need = Requirement(run.function_id, capabilities=frozenset(run.required_capabilities()))
        connection = self.releases.route(self.env.scope, need)
        if connection is not None:
            return connection
        self._note(run, "no compatible live worker: work queued")
        self._queued.append(action)
        return None

    def routing_generation(self) -> str | None:
        head = self.store.workspace_head(self.env.scope["workspace_id"])
        return head.generation_id if head is not None else None

    def triggers_at(self, generation_id: str | None) -> list[tuple[str, Any]]:
        """(application, trigger binding) of the frozen routing generation [S43, S31]."""
        workspace_id = self.env.scope["workspace_id"]
        routing = next(
            (
                generation
                for generation in self.store.workspace_generations(workspace_id)
                if generation.generation_id == generation_id
            ),
            None,
        )
        if routing is None:
            return []
        found = []
        for application_id, app_generation in routing.applications.items():
            scope = {"workspace_id": workspace_id, "application_id": application_id}
            for generation in self.store.application_generations(scope):
                if generation.generation_id == app_generation:
                    found.extend((application_id, trigger) for trigger in generation.triggers)
        return found

    # ================================================================= runs

    def _new_run(
        self,
        run_id: str,
        alias: str,
        function_id: str,
        input_value: dict,
        *,
        parent: tuple[str, str] | None = None,
        bounds: Iterable[tuple[int | None, str]] = (),
    ) -> RunState:
        """A run created now; its deadline is the tightest of its bounds [S48, S101]."""
        now = self.clock.now_ms
        run = RunState(run_id, function_id, input_value, now, parent=parent)
        timeout = self.env.functions.get(function_id)
        candidates = [(now + timeout, "function")] if timeout is not None else []
        if timeout is None and self.policy_timeout_ms is not None:  # an inherited default [S46]
            candidates = [(now + self.policy_timeout_ms, "policy")]
        candidates += [(instant, source) for instant, source in bounds if instant is not None]
        if candidates:
            run.deadline_ms, run.deadline_source = min(candidates, key=lambda pair: pair[0])
            self._keep(run, self.scheduler.at(run.deadline_ms, lambda: self._deadline(run)))
        self.runs[run_id] = run
        self.aliases[run_id] = alias
        self._note(run, f"run created: {function_id}")
        self._discover_soon(run)
        return run

    def _keep(self, run: RunState, entry: Any) -> None:
        self._pending.setdefault(run.run_id, []).append(entry)

    def _finish(self, run: RunState, status: str) -> None:
        """A run reaches a terminal status: its pending work is cancelled, its parent told."""
        run.status = status
        for entry in self._pending.pop(run.run_id, []):
            self.scheduler.cancel(entry)
        self._discovering.discard(run.run_id)
        for wait in self.events.waits:
            if wait.run_id == run.run_id:
                wait.settled = True
        for child in self.runs.values():
            if child.parent is not None and child.parent[0] == run.run_id and not child.terminal:
                child.error = server_error("sdk.cancelled", "the parent run ended")
                self._note(child, "cancelled with its parent")
                self._finish(child, CANCELLED)
        self._note(run, f"run {status}")
        if run.parent is not None and status != CANCELLED:
            self._settle_parent(run)

    def _settle_parent(self, child: RunState) -> None:
        """The child's accepted terminal outcome is an ordinary accepted step result [S100]."""
        parent = self.runs[child.parent[0]]  # type: ignore[index]
        step_id = child.parent[1]  # type: ignore[index]
        if parent.terminal or step_id in parent.history:
            return
        if child.status == COMPLETED:
            parent.settle(step_id, {"status": "completed", "value": child.value})
        else:
            parent.settle(step_id, {"status": "failed", "error": child.error})
        self._discover_soon(parent)

    def _deadline(self, run: RunState) -> None:
        """The whole-run deadline passed: the run times out; a child's parent sees sdk.timeout.
        A live child whose own deadline is reached too (one bounded by this run's deadline)
        times out at it first, rather than being cancelled with its parent [S101]."""
        if run.terminal:
            return
        for child in list(self.runs.values()):
            if (
                child.parent is not None
                and child.parent[0] == run.run_id
                and not child.terminal
                and child.deadline_ms is not None
                and child.deadline_ms <= self.clock.now_ms
            ):
                self._deadline(child)
        error = server_error("sdk.timeout", f"the run's {run.deadline_source} deadline passed")
        if run.unwinding and run.error is not None:  # blocked mid-unwind too (D-BLOCKED-UNWIND)
            # the unwind stops where it is; the failure it was undoing is kept as the cause
            error["cause"] = run.error  # (D-COMPENSATION-DEADLINE)
        run.error = error
        self._finish(run, TIMED_OUT)

    def _live(self, run: RunState) -> bool:
        if run.terminal:
            return False
        if run.deadline_ms is not None and self.clock.now_ms >= run.deadline_ms:
            self._deadline(run)
            return False
        return True

    # ================================================================= discovery

    def _discover_soon(self, run: RunState) -> None:
        if run.run_id in self._discovering or run.terminal:
            return
        self._discovering.add(run.run_id)
        self._keep(run, self.scheduler.soon(lambda: self._discover(run), "discover"))

    def _discover(self, run: RunState) -> None:
        """One discovery pass over the accepted history [S70, S72]."""
        self._discovering.discard(run.run_id)
        if not self._live(run) or run.status in (BLOCKED, COMPENSATING):
            return
        worker = self._worker_for(run, lambda: self._discover_soon(run))
        if worker is None:
            return
        body = {
            "run_id": run.run_id,
            "function_id": run.function_id,
            "mode": "discover",
            "input": run.input,
            "history": run.history_list(),
        }
        entry, answer = self._dispatch(run, "discover", body, worker=worker)
        if answer is None:  # lost: discovery is repeatable, so it is simply invoked again [S07]
            self._discover_soon(run)
            return
        kind, answer_body = answer["kind"], answer["body"]
        self._after_faults(run, "discover", None, body, entry, _declared_step(answer))
        if kind == "declared":
            self._declared(run, answer_body["declaration"], entry)
        elif kind == "completed":
            run.value = answer_body["value"]
            self._finish(run, COMPLETED)
        elif kind == "failed":
            entry.detail = answer_body["error"]["category"]
            self._uncaught(run, answer_body["error"])
        else:
            self._blocked(run, answer_body, entry)

    def _blocked(
        self, run: RunState, body: dict, entry: Entry, operation: Operation | None = None
    ) -> None:
        """definition_blocked: the run waits for a code change [S73], remembering the targeted
        operation it blocked on, if any, so the change resumes it there (D-BLOCKED-UNWIND)."""
        entry.detail = body.get("step_id", "")
        run.blocker = {"reason": body.get("reason"), "step_id": body.get("step_id")}
        run.blocked_on = (operation.step_id, operation.phase) if operation is not None else None
        run.status = BLOCKED
        self._note(run, "blocked until the code changes")

    def _resume(self, run: RunState) -> None:
        """A code change: a run blocked on a compensation target goes on unwinding, offered the
        same target at the same attempt (definition_blocked ran nothing, so no physical attempt
        happened); any other blocked run is discovered again (D-BLOCKED-UNWIND) [S73, S114]."""
        blocked_on, run.blocked_on, run.blocker = run.blocked_on, None, None
        if blocked_on is not None and blocked_on[1] == "compensation":
            run.status = COMPENSATING
            self._note(run, f"code changed: compensation of {blocked_on[0]} offered again")
            self._forward_soon(run, run.operation(*blocked_on))
            return
        run.status = RUNNING
        self._discover_soon(run)

    def _declared(
        self, run: RunState, declaration: dict, entry: Entry, sent: list[dict] | None = None
    ) -> None:
        """Persist the declaration and create its durable work in one step [S79].

        `sent` is the history the discovery was sent with when it is not the current one (a
        redelivered request): a declaration of a step settled since is a stale answer.
        """
        step_id, kind = declaration["step_id"], declaration["type"]
        entry.detail = f"{kind} {step_id}"
        recorded = run.declarations.get(step_id)
        if step_id in run.history:
            if sent is not None and all(item["step_id"] != step_id for item in sent):
                self._note(run, f"stale declaration of {step_id}: settled since; ignored")
                if kind == "emit":  # the idempotency claim is what keeps it one event [S109]
                    self._accept_emission(run, declaration)
                return
            # "Completed matching steps return their recorded values without executing their
            # callbacks": a pass that declares a settled step ignored the history it was sent
            raise HostFault(
                f"declared {kind} {step_id!r} although the history it was sent settles it"
            )
        if recorded is not None:
            self._repeated(run, recorded, declaration)
            return
        if not self._within_budget(run):
            self._over_budget(run, declaration)
            return
        run.declarations[step_id] = declaration
        run.accepted_ms[step_id] = self.clock.now_ms
        if kind == "step":
            operation = run.operations.get((step_id, "forward"))
            if operation is not None and operation.obsolete:
                # a new declaration after obsolescence: a new operation (D-ATTEMPT-IDENTITY)
                del run.operations[(step_id, "forward")]
                run.incarnations[step_id] = run.incarnations.get(step_id, 1) + 1
            self._forward_soon(run, run.operation(step_id, "forward"))
        elif kind == "timer":
            self._arm_timer(run, declaration)
        elif kind == "wait":
            self._register_wait(run, declaration)
        elif kind == "invoke":
            self._start_child(run, declaration)
        elif kind == "emit":
            self._emit(run, declaration)

    def _repeated(self, run: RunState, recorded: dict, declaration: dict) -> None:
        """A step declared again while its work is pending (a rediscovery, a redelivered or
        duplicate request, a restart's recovery): the recorded declaration stands. "The
        declaration is a step, so it is declared once: a repeated declaration keeps the
        recorded anchor" [S83], a wait "keeps the registration and the anchor" [S93], a child
        or event keeps its identity [S99, S108]; one that disagrees is refused rather than
        adopted (D-REPEATED-DECLARATION): nothing changes and the run goes on."""
        step_id = declaration["step_id"]
        if recorded != declaration:
            self._note(run, f"declaration of {step_id} disagrees with the recorded one: refused")
            return
        if recorded["type"] == "step":
            operation = run.operation(step_id, "forward")
            if operation.due_ms is None and not operation.obsolete:  # nothing scheduled
                self._forward_soon(run, operation)

    def _within_budget(self, run: RunState) -> bool:
        """Whether one more history entry (this declaration's outcome) fits the replay budget."""
        return len(run.history) < self.policy.history_limit

    def _over_budget(self, run: RunState, declaration: dict) -> None:
        """The history already holds as many entries as one invocation may carry, so this
        declaration's outcome could never be replayed: it is refused before it commits
        (nothing armed, registered, created or accepted) and the run fails as if its
        function had, unwinding its completed steps (D-REPLAY-BUDGET) [S95]."""
        step_id = declaration["step_id"]
        limit = self.policy.history_limit
        self._note(run, f"declaration of {step_id} refused: history at the replay budget ({limit})")
        error = server_error(
            "server.replay_budget",
            f"{declaration['type']} {step_id} would be history entry {len(run.history) + 1}; "
            f"the replay budget is {limit}",
        )
        self._uncaught(run, error)

    # ================================================================= targeted execution

    def _forward_soon(self, run: RunState, operation: Operation, delay_ms: int = 0) -> None:
        operation.due_ms = self.clock.now_ms + max(delay_ms, 0)
        self._schedule_attempt(run, operation)

    def _schedule_attempt(self, run: RunState, operation: Operation) -> None:
        due = operation.due_ms if operation.due_ms is not None else self.clock.now_ms
        self._keep(run, self.scheduler.at(due, lambda: self._targeted(run, operation)))

    def _targeted(self, run: RunState, operation: Operation) -> None:
        """One physical attempt of a forward or compensation operation [S113, S114, S142]."""
        if not self._live(run) or operation.obsolete:
            return
        worker = self._worker_for(run, lambda: self._targeted(run, operation))
        if worker is None:
            return
        operation.due_ms = None
        mode = "forward" if operation.phase == "forward" else "compensate"
        self.fencing += 1
        target = {
            "run_id": run.run_id,
            "step_id": operation.step_id,
            "phase": operation.phase,
            "attempt": operation.attempt,
            "operation_id": operation.operation_id,
            "fencing_generation": str(self.fencing),
        }
        body = {
            "run_id": run.run_id,
            "function_id": run.function_id,
            "mode": mode,
            "input": run.input,
            "history": run.history_list(),
            "target": target,
        }
        entry, answer = self._dispatch(run, mode, body, target, worker)
        if answer is None:
            self._attempt_unknown(run, operation)
            return
        kind, answer_body = answer["kind"], answer["body"]
        self._after_faults(run, mode, target, body, entry)
        if kind in _TARGETED_ANSWERS[mode]:
            if not self._identity_ok(run, target, answer_body, entry):
                return
            if kind.endswith("_completed"):
                self._attempt_completed(run, operation, answer_body["value"])
            else:
                entry.detail = answer_body["error"]["category"]
                self._attempt_failed(run, operation, answer_body["error"])
        elif kind == "target_not_found":
            self._not_found(run, operation)
        elif kind == "rejected_before_start":
            if not self._rejection_ok(run, answer, body, target, entry):
                return
            entry.detail = answer_body["reason"]["code"]
            self._rejected(run, operation, answer_body["reason"])
        else:
            self._blocked(run, answer_body, entry, operation)

    def _identity_ok(self, run: RunState, target: dict, body: dict, entry: Entry) -> bool:
        """The answer names the attempt it settles; another identity is fenced out [S142]."""
        for member in ("operation_id", "attempt", "fencing_generation"):
            if body.get(member) != target[member]:
                entry.detail = f"fenced: {member} {body.get(member)!r} is not {target[member]!r}"
                self._fenced_out(run, target, entry.detail)
                return False
        return True

    def _fenced_out(self, run: RunState, target: dict, detail: str) -> None:
        """An answer that does not name the attempt it answers settles nothing: it is not
        authoritative [S122], so the attempt's outcome stays unknown and it is retried like a
        lost one; exhausting the policy records `server.fenced` (D-FENCED-ANSWER)."""
        phase = target["phase"]
        operation = run.operation(target["step_id"], phase)
        self._note(run, f"answer fenced out ({detail}); outcome unknown")
        error = server_error("server.fenced", detail)
        error["retryable"] = True
        self._attempt_failed(run, operation, error)

    def _rejection_ok(
        self, run: RunState, answer: dict, body: dict, target: dict, entry: Entry
    ) -> bool:
        """rejected_before_start names the request, attempt and fencing generation [S121]."""
        reason = answer["body"]
        expected = {
            "request_id": self.link.last_request_id,
            "attempt": target["attempt"],
            "fencing_generation": target["fencing_generation"],
        }
        for member, value in expected.items():
            if reason.get(member) != value:
                entry.detail = f"rejection names {member} {reason.get(member)!r}, not {value!r}"
                self._fenced_out(run, target, entry.detail)
                return False
        return True

    def _attempt_completed(self, run: RunState, operation: Operation, value: dict) -> None:
        if operation.phase == "forward":
            run.settle(operation.step_id, {"status": "completed", "value": value})
            self._discover_soon(run)
        else:
            run.compensated.append(operation.step_id)
            self._unwind_next(run)

    def _attempt_failed(self, run: RunState, operation: Operation, error: dict) -> None:
        """Retry by the declared policy with backoff, else record the terminal failure [S143]."""
        if operation.policy.retries_after(operation.attempt, error):
            operation.attempt += 1
            delay = operation.policy.delay_before(operation.attempt)
            self._note(run, f"retry {operation.step_id} #{operation.attempt} in {delay} ms")
            self._forward_soon(run, operation, delay)
            return
        if operation.phase == "forward":
            run.settle(operation.step_id, {"status": "failed", "error": error})
            self._discover_soon(run)
        else:
            run.error = error
            self._note(run, f"compensation of {operation.step_id} failed for good")
            self._finish(run, COMPENSATION_FAILED)

    def _attempt_unknown(self, run: RunState, operation: Operation) -> None:
        """The attempt's outcome was never learnt (answer lost, host killed): transport failure,
        not an application failure [S119]; the work stays queued and is offered again as the
        next attempt after the backoff [S60]. Exhausting the policy records a server failure."""
        error = server_error(
            "server.attempt_lost", f"the outcome of attempt {operation.attempt} was lost"
        )
        error["retryable"] = True
        self._attempt_failed(run, operation, error)

    def _not_found(self, run: RunState, operation: Operation) -> None:
        """target_not_found: forward work becomes obsolete and the run is rediscovered; in
        compensation a skip is recorded and the unwind continues [S116, S117]."""
        operation.obsolete = True
        if operation.phase == "forward":
            run.declarations.pop(operation.step_id, None)
            self._note(run, f"{operation.step_id} obsolete; rediscovering")
            self._discover_soon(run)
        else:
            run.skipped.append(operation.step_id)
            self._unwind_next(run)

    def _rejected(self, run: RunState, operation: Operation, reason: dict) -> None:
        """rejected_before_start: the callback never ran, so the outcome is not ambiguous; a
        retryable reason offers the same attempt again later, another makes the target
        obsolete [S123]."""
        if reason.get("retryable"):
            self._note(
                run, f"{operation.step_id} refused before start; again in {ADMISSION_RETRY_MS} ms"
            )
            self._forward_soon(run, operation, ADMISSION_RETRY_MS)
        else:
            self._not_found(run, operation)

    # ================================================================= compensation

    def _uncaught(self, run: RunState, error: dict) -> None:
        """An uncaught failure moves the run into compensation: every completed step, newest
        completion first, gets a compensation target [S146, S115]."""
        run.error = error
        run.unwind = list(reversed(run.completion_order))
        if not run.unwind:
            self._finish(run, FAILED)
            return
        run.status = COMPENSATING
        self._note(run, "compensating " + ", ".join(run.unwind))
        self._unwind_next(run)

    def _unwind_next(self, run: RunState) -> None:
        if not run.unwind:
            self._finish(run, FAILED)
            return
        step_id = run.unwind.pop(0)
        self._forward_soon(run, run.operation(step_id, "compensation"))

    # ============================================ timers, waits, children, emissions

    def _arm_timer(self, run: RunState, declaration: dict) -> None:
        """Anchored at acceptance; an elapsed deadline settles as soon as it can, never before
        acceptance [S83]; the wake is an ordinary accepted step result [S85]."""
        now = self.clock.now_ms
        if "delay_ms" in declaration:
            due = now + int(declaration["delay_ms"])
        else:
            due = max(int(declaration["deadline_ms"]), now)
        step_id = declaration["step_id"]
        run.timers[step_id] = due
        self._schedule_wake(run, step_id, due)

    def _schedule_wake(self, run: RunState, step_id: str, due: int) -> None:
        def wake() -> None:
            if run.terminal or step_id in run.history or run.timers.get(step_id) != due:
                return  # settled, or armed again at another instant
            run.timers.pop(step_id, None)
            self._note(run, f"timer {step_id} fired")
            run.settle(step_id, {"status": "completed", "value": {"t": "null"}})
            self._discover_soon(run)

        self._keep(run, self.scheduler.at(due, wake, f"timer {step_id}"))

    def _register_wait(self, run: RunState, declaration: dict) -> None:
        """Registered in the accepting transaction; the timeout anchored there [S92, S93]."""
        now = self.clock.now_ms
        wait = Wait(
            run.run_id,
            declaration["step_id"],
            declaration["event"],
            dict(declaration["correlation"]),
            self.events.next_position(),
            now,
            now + int(declaration["timeout_ms"]),
        )
        self.events.register(wait)
        self._note(run, f"wait {wait.step_id} registered for {wait.event}")
        self._schedule_wait_timeout(run, wait)

    def _schedule_wait_timeout(self, run: RunState, wait: Wait) -> None:
        def timeout() -> None:
            if wait.settled or run.terminal:
                return
            wait.settled = True
            self._note(run, f"wait {wait.step_id} timed out")
            error = server_error("sdk.timeout", f"no {wait.event} event before the timeout")
            run.settle(wait.step_id, {"status": "failed", "error": error})
            self._discover_soon(run)

        self._keep(run, self.scheduler.at(wait.timeout_at_ms, timeout, f"wait {wait.step_id}"))

    def _start_child(self, run: RunState, declaration: dict) -> None:
        """A child run materialized at acceptance, identity from (scope, parent run, step),
        bounded by the tightest deadline [S99, S100, S101]."""
        step_id = declaration["step_id"]
        child_id = derived_id("run", self.env.scope, run.run_id, step_id)
        if child_id in self.runs:
            return
        now = self.clock.now_ms
        timeout = declaration.get("timeout_ms")
        bounds = [
            (now + int(timeout) if timeout is not None else None, "invoke"),
            (run.deadline_ms, "parent"),
        ]
        alias = (
            f"child:{step_id}" if run.parent is None else f"{self.aliases[run.run_id]}/{step_id}"
        )
        if declaration["function_id"] not in self.env.functions:
            error = server_error("server.unknown_function", declaration["function_id"])
            run.settle(step_id, {"status": "failed", "error": error})
            self._discover_soon(run)
            return
        self._new_run(
            child_id,
            alias,
            declaration["function_id"],
            declaration["input"],
            parent=(run.run_id, step_id),
            bounds=bounds,
        )

    def _emit(self, run: RunState, declaration: dict) -> None:
        """Accepted once, identity from (scope, run, step), settled with the receipt in the
        same step, then routed to matching waits and triggered functions [S108, S109, S110]."""
        event = self._accept_emission(run, declaration)
        run.settle(
            declaration["step_id"],
            {"status": "completed", "value": {"t": "str", "v": event.event_id}},
        )
        self._discover_soon(run)

    def _accept_emission(self, run: RunState, declaration: dict) -> AcceptedEvent:
        """The transactional acceptance: one event per (scope, run, step) identity, routed once."""
        step_id = declaration["step_id"]
        event_id = derived_id("evt", self.env.scope, run.run_id, step_id)
        event, new = self.events.accept(
            event_id,
            declaration["event"],
            declaration["payload"],
            declaration["metadata"],
            self.clock.now_ms,
            f"{self.aliases[run.run_id]}/{step_id}",
            self.routing_generation(),
        )
        if new:
            self._note(run, f"event {event.name} accepted ({event.event_id})")
            self._route(event)
        return event

    def _submit(self, name: str, payload: dict, metadata: dict[str, str], index: int) -> None:
        event_id = derived_id("evt", self.env.scope, "submitted", index)
        event, new = self.events.accept(
            event_id,
            name,
            payload,
            metadata,
            self.clock.now_ms,
            "submitted",
            self.routing_generation(),
        )
        if new:
            self._server_note(f"event {name} submitted ({event_id})")
            self._route(event)

    def _route(self, event: AcceptedEvent) -> None:
        """Settle every wait the event matches, then start the functions its triggers name."""
        for wait in self.events.matching_waits(event):
            wait.settled = True
            run = self.runs[wait.run_id]
            if run.terminal:
                continue
            if len(canonical_bytes(event.payload)) > MAX_VALUE_BYTES:
                # "A matched payload the durable record cannot carry" [S95]
                error = server_error("sdk.invalid_result", "the matched payload is too large")
                run.settle(wait.step_id, {"status": "failed", "error": error})
                self._note(run, f"wait {wait.step_id} matched {event.name}: unrecordable")
            else:
                run.settle(wait.step_id, {"status": "completed", "value": event.payload})
                self._note(run, f"wait {wait.step_id} matched {event.name}")
            self._discover_soon(run)
        for index, (application_id, trigger) in enumerate(
            self.triggers_at(event.routing_generation)
        ):
            if trigger.event != event.name:
                continue
            if application_id != self.env.scope["application_id"]:
                continue  # another application's worker serves it: not simulated here
            run_id = derived_id("run", event.event_id, trigger.id, index)
            if run_id in self.runs:
                continue
            alias = f"{trigger.function}<-{event.name}"
            self._new_run(run_id, alias, trigger.function, event.payload)

    # ================================================================= script and faults

    def _script(self, item: ScriptItem, index: int) -> None:
        if item.kind == "event":
            self._submit(item.event, item.payload or {"t": "bytes", "v": ""}, item.metadata, index)
        elif item.kind in ("ambient", "code"):
            self.link.set_ambient(item.key, item.value)
            self._server_note(f"{item.kind} {item.key}={item.value}")
            if item.kind == "code":
                for run in self.runs.values():
                    if run.status == BLOCKED:
                        self._resume(run)
        elif item.kind == "admission":
            self.link.set_admission(item.open)
            self._server_note("admission " + ("open" if item.open else "closed"))
        elif item.kind == "start":
            run_id = f"{self.root_run_id}+{index + 2}"
            self._new_run(run_id, f"started:{index}", item.function, item.input or {"t": "null"})
        elif item.kind == "server_restart":
            self._server_restart()
        elif item.kind == "worker":
            body = phantom_body(self.link.register_body, item.worker or {})
            self.phantoms.add(body["instance_id"])
            self._server_note(f"worker {body['instance_id']} registered")
            self._register_worker(body)
        else:
            self.link.restart()
            self._server_note("host restarted")

    def _fault_for(self, run: RunState, mode: str, target: dict | None) -> str | None:
        step = target["step_id"] if target else None
        attempt = target["attempt"] if target else None
        for fault in self.faults:
            if not fault.acts_after and fault.matches(mode, step, attempt, run.function_id):
                fault.used += 1
                return fault.kind
        return None

    def _after_faults(
        self,
        run: RunState,
        mode: str,
        target: dict | None,
        body: dict,
        entry: Entry,
        declared: str | None = None,
    ) -> None:
        """Schedule what a `redeliver` or `rediscover` fault does once this answer is applied."""
        if entry.fault is not None and entry.fault.startswith("redelivered"):
            return  # a redelivery is not itself redelivered
        step = target["step_id"] if target else declared
        attempt = target["attempt"] if target else None
        for fault in self.faults:
            if fault.acts_after and fault.matches(mode, step, attempt, run.function_id):
                fault.used += 1
                if fault.kind == "redeliver":
                    action = lambda body=body: self._redeliver(run, mode, body)  # noqa: E731
                else:
                    action = lambda: self._rediscover(run)  # noqa: E731
                self._keep(run, self.scheduler.after(fault.after_ms, action, fault.kind))
                return

    def _rediscover(self, run: RunState) -> None:
        """A discovery invoked again after an ambiguous transport failure [S07]."""
        if run.terminal:
            return
        self._note(run, "discovery invoked again")
        self._discovering.discard(run.run_id)
        self._discover(run)

    def _invoke_entry(self, run: RunState, mode: str, target: dict | None) -> Entry:
        """The timeline entry of one invoke about to be sent (counted as an invocation)."""
        entry = Entry(
            self.clock.elapsed_ms,
            self.aliases[run.run_id],
            "invoke",
            mode=mode,
            step=target["step_id"] if target else None,
            attempt=target["attempt"] if target else None,
            operation_id=target["operation_id"] if target else None,
            fencing_generation=target["fencing_generation"] if target else None,
        )
        self.timeline.add(entry)
        self.invocations += 1
        return entry

    def _redeliver(self, run: RunState, mode: str, body: dict) -> None:
        """The same request delivered again after its answer was applied: the history it was
        sent with, the same target and fencing generation. A targeted answer to it is stale
        and settles nothing; a discovery's declaration is a repeated one (D-STALE-ANSWER)."""
        if run.terminal:
            return
        target = body.get("target")
        entry = self._invoke_entry(run, mode, target)
        answer, _ = self.link.invoke(body, None)
        if self.trace:
            entry.trace = self.link.trace()
            if answer is not None:
                entry.violations = [
                    finding.message
                    for finding in check_invariants({"body": body}, answer, entry.trace)[0]
                ]
        if answer is None:
            entry.answer, entry.fault = "(none)", "redelivered; answer lost"
            return
        if answer["kind"] not in _ALLOWED[mode]:
            raise HostFault(f"answered a {mode} invoke with {answer['kind']!r}")
        entry.answer = answer["kind"]
        if target is not None:
            entry.fault = "redelivered; stale answer ignored"
            return
        entry.fault = "redelivered"
        if answer["kind"] == "declared":
            self._declared(run, answer["body"]["declaration"], entry, sent=body["history"])
        else:
            entry.fault = "redelivered; stale answer ignored"

    def _offered_to_phantom(
        self, run: RunState, mode: str, target: dict | None, worker: Connection
    ) -> Entry:
        """Routing chose a worker the scenario registered as unfit: the work goes unanswered."""
        entry = Entry(
            self.clock.elapsed_ms,
            self.aliases[run.run_id],
            "invoke",
            mode=mode,
            step=target["step_id"] if target else None,
            attempt=target["attempt"] if target else None,
            answer="(none)",
            fault=f"offered to {worker.instance_id}: no answer",
        )
        self.timeline.add(entry)
        self.invocations += 1
        return entry

    # ================================================================= server restart

    def _server_restart(self) -> None:
        """The server restarts: everything volatile is lost (connections, the in-memory queue,
        work waiting for a worker, discoveries in flight) and everything durable is kept (runs,
        history, declarations, timers' recorded instants, wait registrations, deadlines, the
        next attempt's due instant, accepted events, the fencing counter). Recovery schedules
        the durable work again at its recorded instants and rediscovers every running run; the
        host's worker reconnects (D-SERVER-RESTART)."""
        self._server_note("server restarted")
        for entries in self._pending.values():
            for scheduled in entries:
                self.scheduler.cancel(scheduled)
        self._pending.clear()
        self._queued.clear()
        self._discovering.clear()
        self.releases.connections.clear()
        for run in self.runs.values():
            if run.terminal:
                continue
            if run.deadline_ms is not None:
                self._keep(run, self.scheduler.at(run.deadline_ms, lambda r=run: self._deadline(r)))
            for step_id, due in run.timers.items():
                self._schedule_wake(run, step_id, due)
            for wait in self.events.waits:
                if wait.run_id == run.run_id and not wait.settled:
                    self._schedule_wait_timeout(run, wait)
            for operation in run.operations.values():
                if operation.due_ms is not None and not operation.obsolete:
                    self._schedule_attempt(run, operation)
            if run.status == RUNNING:
                self._discover_soon(run)
        if self.link.register_body is not None:
            self._register_worker(self.link.register_body)

    def _dispatch(
        self,
        run: RunState,
        mode: str,
        body: dict,
        target: dict | None = None,
        worker: Connection | None = None,
    ) -> tuple[Entry, dict | None]:
        """Send one invoke (with its fault, if any); the timeline entry and the answer."""
        if worker is not None and worker.instance_id in self.phantoms:
            return self._offered_to_phantom(run, mode, target, worker), None
        fault = self._fault_for(run, mode, target)
        entry = self._invoke_entry(run, mode, target)
        if fault == "restart":
            self.link.restart()
            self._note(run, "host restarted")
            entry.at_ms = self.clock.elapsed_ms
            fault = None
        answer, duplicate = self.link.invoke(body, fault)
        if self.trace and fault != "crash":  # a killed host's trace died with it
            entry.trace = self.link.trace()
            if answer is not None and duplicate is None:  # one pass: the invariants apply
                entry.violations = [
                    finding.message
                    for finding in check_invariants({"body": body}, answer, entry.trace)[0]
                ]
            else:  # two passes, or one whose answer was read and dropped
                dropped = getattr(self.link, "dropped_answer", None)
                read = [a for a in (answer, duplicate, dropped) if a is not None]
                entry.violations = check_delivered({"body": body}, read, entry.trace)
        if self.timeline.keep_frames:
            entry.frames = {"invoke": body, "answer": answer}
        if answer is None:
            entry.answer = "(none)"
            entry.fault = _FAULT_NOTES.get(fault or "", "host killed")
            return entry, None
        if answer["kind"] not in _ALLOWED[mode]:
            raise HostFault(f"answered a {mode} invoke with {answer['kind']!r}")
        entry.answer = answer["kind"]
        if duplicate is not None:
            entry.fault = "delivered twice; second answer " + duplicate["kind"] + " ignored"
        return entry, answer

    def _server_note(self, text: str) -> None:
        self.timeline.add(Entry(self.clock.elapsed_ms, "server", "note", text=text))

    def _note(self, run: RunState, text: str) -> None:
        self.timeline.add(
            Entry(
                self.clock.elapsed_ms, self.aliases.get(run.run_id, run.run_id), "note", text=text
            )
        )


#: How a timeline names an invoke whose answer never came (D-HTTP-STATUS: a generic status is no
#: answer, so its outcome is unknown, as a lost answer's).
_FAULT_NOTES = {
    "lost_answer": "answer lost",
    "http_502": "HTTP 502, outcome unknown",
    "http_503": "HTTP 503, outcome unknown",
    "http_timeout": "HTTP timeout, outcome unknown",
    "http_reset": "connection reset, outcome unknown",
}
