"""Server mutants: the model server with one plausible fault patched in, in memory.

Why: a lifecycle scenario that no faulty server fails may be checking nothing the server does,
and a server-side RFD 2 clause that no scenario defends can break silently. Each mutant here is
one class of server bug (from issue 23's fault-injection check: a re-armed timer, a second event
accepted, a child re-created, an anchor at run start, each child bound dropped, an attempt
identity reused, the unwind order, a skip not recorded, retries off by one, ...) applied with
`unittest.mock.patch.object` for the duration of a `with apply(name):` block.
`tests/server/kill_matrix.py` plays the lifecycle corpus against each and writes
SERVER_KILL_MATRIX.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from unittest import mock

from fakepeer.server import loop as loop_module
from fakepeer.server.events import EventLog
from fakepeer.server.loop import ModelServer
from fakepeer.server.releases import Connection
from fakepeer.server.retry import RetryPolicy
from fakepeer.server.state import COMPENSATING, FAILED, RunState

Patch = Callable[[contextlib.ExitStack], None]


@dataclass(frozen=True)
class ServerMutant:
    name: str
    fault: str  # what the faulty server does, for the matrix
    patch: Patch


def _method(stack: contextlib.ExitStack, owner: type, name: str, replacement: object) -> None:
    stack.enter_context(mock.patch.object(owner, name, replacement))


# ---------------------------------------------------------------- repeated declarations

_REPEATED = ModelServer._repeated


def _timer_rearmed(stack: contextlib.ExitStack) -> None:
    def repeated(self: ModelServer, run: RunState, recorded: dict, declaration: dict) -> None:
        if declaration["type"] == "timer":
            self._arm_timer(run, declaration)  # anchored again at this acceptance
            return
        _REPEATED(self, run, recorded, declaration)

    _method(stack, ModelServer, "_repeated", repeated)


def _wait_reregistered(stack: contextlib.ExitStack) -> None:
    def repeated(self: ModelServer, run: RunState, recorded: dict, declaration: dict) -> None:
        if declaration["type"] == "wait":
            for wait in self.events.waits:
                if wait.run_id == run.run_id and wait.step_id == declaration["step_id"]:
                    wait.settled = True  # superseded by the new registration
            self._register_wait(run, declaration)
            return
        _REPEATED(self, run, recorded, declaration)

    _method(stack, ModelServer, "_repeated", repeated)


def _recreate_child(self: ModelServer, run: RunState, declaration: dict) -> None:
    from fakepeer.server.state import derived_id

    child_id = derived_id("run", self.env.scope, run.run_id, declaration["step_id"])
    for entry in self._pending.pop(child_id, []):
        self.scheduler.cancel(entry)
    self.runs.pop(child_id, None)
    self._start_child(run, declaration)


def _child_recreated(stack: contextlib.ExitStack) -> None:
    def repeated(self: ModelServer, run: RunState, recorded: dict, declaration: dict) -> None:
        if declaration["type"] == "invoke":
            _recreate_child(self, run, declaration)
            return
        _REPEATED(self, run, recorded, declaration)

    _method(stack, ModelServer, "_repeated", repeated)


def _disagreeing_adopted(stack: contextlib.ExitStack) -> None:
    def repeated(self: ModelServer, run: RunState, recorded: dict, declaration: dict) -> None:
        if recorded != declaration:
            run.declarations[declaration["step_id"]] = declaration
            if declaration["type"] == "invoke":
                _recreate_child(self, run, declaration)
            elif declaration["type"] == "timer":
                self._arm_timer(run, declaration)
            return
        _REPEATED(self, run, recorded, declaration)

    _method(stack, ModelServer, "_repeated", repeated)


def _step_dispatched_again(stack: contextlib.ExitStack) -> None:
    def repeated(self: ModelServer, run: RunState, recorded: dict, declaration: dict) -> None:
        if declaration["type"] == "step":
            self._forward_soon(run, run.operation(declaration["step_id"], "forward"))
            return
        _REPEATED(self, run, recorded, declaration)

    _method(stack, ModelServer, "_repeated", repeated)


_ACCEPT = EventLog.accept


def _second_event(stack: contextlib.ExitStack) -> None:
    def accept(self: EventLog, event_id: str, *args: object, **kwargs: object) -> tuple:
        if event_id in self.by_identity:  # the idempotency claim ignored
            event_id = f"{event_id}-{len(self.events)}"
        return _ACCEPT(self, event_id, *args, **kwargs)

    _method(stack, EventLog, "accept", accept)


# ---------------------------------------------------------------- anchors

_ARM, _REGISTER = ModelServer._arm_timer, ModelServer._register_wait


def _anchor_at_run_start(stack: contextlib.ExitStack) -> None:
    def at_start(original: Callable) -> Callable:
        def patched(self: ModelServer, run: RunState, declaration: dict) -> None:
            now = self.clock.now_ms
            self.clock.now_ms = run.created_ms
            try:
                original(self, run, declaration)
            finally:
                self.clock.now_ms = now

        return patched

    _method(stack, ModelServer, "_arm_timer", at_start(_ARM))
    _method(stack, ModelServer, "_register_wait", at_start(_REGISTER))


# ---------------------------------------------------------------- deadlines and policy

_NEW_RUN = ModelServer._new_run


def _bound_dropped(source: str) -> Patch:
    def patch(stack: contextlib.ExitStack) -> None:
        def new_run(self: ModelServer, *args: object, **kwargs: object) -> RunState:
            if source == "function":
                saved = dict(self.env.functions)
                self.env.functions = {key: None for key in saved}
                try:
                    return _NEW_RUN(self, *args, **kwargs)
                finally:
                    self.env.functions = saved
            bounds = [(i, s) for i, s in kwargs.pop("bounds", ()) if s != source]
            return _NEW_RUN(self, *args, bounds=bounds, **kwargs)

        _method(stack, ModelServer, "_new_run", new_run)

    return patch


def _policy_default_ignored(stack: contextlib.ExitStack) -> None:
    def new_run(self: ModelServer, *args: object, **kwargs: object) -> RunState:
        self.policy_timeout_ms = None
        return _NEW_RUN(self, *args, **kwargs)

    _method(stack, ModelServer, "_new_run", new_run)


_PUBLISH = ModelServer._publish


def _policy_maximum_clamped(stack: contextlib.ExitStack) -> None:
    def publish(self: ModelServer) -> None:
        maximum = self.store.policy_max_timeout_ms
        self.store.policy_max_timeout_ms = None  # activation accepts ...
        _PUBLISH(self)
        if maximum is not None:  # ... and the timeouts are clamped to the maximum
            self.env.functions = {
                key: (min(value, maximum) if value is not None else None)
                for key, value in self.env.functions.items()
            }

    _method(stack, ModelServer, "_publish", publish)


_DEADLINE = ModelServer._deadline


def _children_cancelled_at_parent_deadline(stack: contextlib.ExitStack) -> None:
    def deadline(self: ModelServer, run: RunState) -> None:
        if run.terminal:
            return
        run.error = loop_module.server_error(
            "sdk.timeout", f"the run's {run.deadline_source} deadline passed"
        )
        self._finish(run, loop_module.TIMED_OUT)

    _method(stack, ModelServer, "_deadline", deadline)


# ---------------------------------------------------------------- attempts, retries, unwind


def _attempt_reused(stack: contextlib.ExitStack) -> None:
    original = RunState.operation

    def operation(self: RunState, step_id: str, phase: str) -> object:
        self.incarnations.pop(step_id, None)  # the re-declared step keeps id and attempt 1
        return original(self, step_id, phase)

    _method(stack, RunState, "operation", operation)


def _retries_off_by_one(stack: contextlib.ExitStack) -> None:
    def retries_after(self: RetryPolicy, attempt: int, error: dict | None) -> bool:
        if error is not None and error.get("retryable") is False:
            return False
        return attempt <= self.max_attempts

    _method(stack, RetryPolicy, "retries_after", retries_after)


def _unwind_in_completion_order(stack: contextlib.ExitStack) -> None:
    def uncaught(self: ModelServer, run: RunState, error: dict) -> None:
        run.error = error
        run.unwind = list(run.completion_order)
        if not run.unwind:
            self._finish(run, FAILED)
            return
        run.status = COMPENSATING
        self._unwind_next(run)

    _method(stack, ModelServer, "_uncaught", uncaught)


_NOT_FOUND = ModelServer._not_found


def _skip_not_recorded(stack: contextlib.ExitStack) -> None:
    def not_found(self: ModelServer, run: RunState, operation: object) -> None:
        if getattr(operation, "phase", "") == "compensation":
            operation.obsolete = True  # type: ignore[attr-defined]
            self._unwind_next(run)
            return
        _NOT_FOUND(self, run, operation)

    _method(stack, ModelServer, "_not_found", not_found)


# ---------------------------------------------------------------- stale answers


def _stale_answer_applied(stack: contextlib.ExitStack) -> None:
    original = ModelServer._redeliver

    def redeliver(self: ModelServer, run: RunState, mode: str, body: dict) -> None:
        target = body.get("target")
        if target is None or run.terminal:
            original(self, run, mode, body)
            return
        answer, _ = self.link.invoke(body, None)
        if self.trace:
            self.link.trace()
        if answer is None:
            return
        operation = run.operation(target["step_id"], target["phase"])
        if answer["kind"].endswith("_completed"):
            self._attempt_completed(run, operation, answer["body"]["value"])
        elif answer["kind"].endswith("_failed"):
            self._attempt_failed(run, operation, answer["body"]["error"])

    _method(stack, ModelServer, "_redeliver", redeliver)


# ---------------------------------------------------------------- budget


def _budget_unchecked(stack: contextlib.ExitStack) -> None:
    _method(stack, ModelServer, "_within_budget", lambda self, run: True)


def _budget_off_by_one(stack: contextlib.ExitStack) -> None:
    def within(self: ModelServer, run: RunState) -> bool:
        return len(run.history) + 1 < self.policy.history_limit

    _method(stack, ModelServer, "_within_budget", within)


# ---------------------------------------------------------------- routing


def _history_requirements_ignored(stack: contextlib.ExitStack) -> None:
    _method(stack, RunState, "required_capabilities", lambda self: set())


def _capacity_ignored(stack: contextlib.ExitStack) -> None:
    _method(stack, Connection, "free", property(lambda self: True))


# ---------------------------------------------------------------- restart

_RESTART = ModelServer._server_restart


def _restart_forgets_schedule(stack: contextlib.ExitStack) -> None:
    def restart(self: ModelServer) -> None:
        for run in self.runs.values():  # recovery finds no durable timers, waits or attempts
            run.timers.clear()
            for operation in run.operations.values():
                operation.due_ms = None
        for wait in self.events.waits:
            wait.timeout_at_ms = 1 << 62
        _RESTART(self)

    _method(stack, ModelServer, "_server_restart", restart)


def _restart_reanchors(stack: contextlib.ExitStack) -> None:
    def restart(self: ModelServer) -> None:
        now = self.clock.now_ms
        for run in self.runs.values():
            for step_id in run.timers:
                declaration = run.declarations[step_id]
                run.timers[step_id] = now + int(declaration.get("delay_ms", 0))
        for wait in self.events.waits:
            run = self.runs[wait.run_id]
            wait.timeout_at_ms = now + int(run.declarations[wait.step_id]["timeout_ms"])
        _RESTART(self)

    _method(stack, ModelServer, "_server_restart", restart)


MUTANTS: tuple[ServerMutant, ...] = (
    ServerMutant(
        "timer-rearmed",
        "a repeated timer declaration arms it again, anchored at the repetition",
        _timer_rearmed,
    ),
    ServerMutant(
        "wait-reregistered",
        "a repeated wait declaration registers it again, anchored at the repetition",
        _wait_reregistered,
    ),
    ServerMutant(
        "child-recreated", "a repeated child declaration creates the child again", _child_recreated
    ),
    ServerMutant(
        "disagreeing-declaration-adopted",
        "a declaration that disagrees with the recorded one replaces it",
        _disagreeing_adopted,
    ),
    ServerMutant(
        "repeated-step-dispatched-again",
        "a repeated step declaration dispatches its operation again",
        _step_dispatched_again,
    ),
    ServerMutant(
        "second-event-accepted", "event acceptance ignores the idempotency claim", _second_event
    ),
    ServerMutant(
        "anchor-at-run-start",
        "timers and wait timeouts are anchored at the run's start, not at acceptance",
        _anchor_at_run_start,
    ),
    ServerMutant(
        "function-bound-dropped",
        "a run's deadline ignores its function's declared run timeout",
        _bound_dropped("function"),
    ),
    ServerMutant(
        "invoke-bound-dropped",
        "a child's deadline ignores the invoke timeout",
        _bound_dropped("invoke"),
    ),
    ServerMutant(
        "parent-bound-dropped",
        "a child's deadline ignores the parent's remaining deadline",
        _bound_dropped("parent"),
    ),
    ServerMutant(
        "policy-default-ignored",
        "a function without a run timeout gets no deadline from the policy default",
        _policy_default_ignored,
    ),
    ServerMutant(
        "policy-maximum-clamped",
        "activation clamps a run timeout above the policy maximum instead of rejecting",
        _policy_maximum_clamped,
    ),
    ServerMutant(
        "children-cancelled-at-parent-deadline",
        "a child bounded by its parent's deadline is cancelled with it, not timed out",
        _children_cancelled_at_parent_deadline,
    ),
    ServerMutant(
        "attempt-reused",
        "a re-declared obsolete step reuses its operation id and attempt 1",
        _attempt_reused,
    ),
    ServerMutant(
        "retries-off-by-one",
        "a step gets one attempt more than its policy allows",
        _retries_off_by_one,
    ),
    ServerMutant(
        "unwind-in-completion-order",
        "compensation runs oldest completion first",
        _unwind_in_completion_order,
    ),
    ServerMutant(
        "skip-not-recorded",
        "a compensation target_not_found is not recorded as a skip",
        _skip_not_recorded,
    ),
    ServerMutant(
        "stale-answer-applied",
        "a redelivered request's stale targeted answer is applied",
        _stale_answer_applied,
    ),
    ServerMutant(
        "replay-budget-unchecked",
        "a declaration past the replay budget is accepted",
        _budget_unchecked,
    ),
    ServerMutant(
        "replay-budget-off-by-one",
        "the replay budget refuses one declaration too early",
        _budget_off_by_one,
    ),
    ServerMutant(
        "history-requirements-ignored",
        "routing ignores the capabilities the run's history needs",
        _history_requirements_ignored,
    ),
    ServerMutant(
        "capacity-ignored", "routing gives work to a worker with no free slot", _capacity_ignored
    ),
    ServerMutant(
        "restart-forgets-schedule",
        "a server restart loses timers, wait timeouts and due attempts",
        _restart_forgets_schedule,
    ),
    ServerMutant(
        "restart-reanchors",
        "a server restart re-anchors timers and wait timeouts at the restart",
        _restart_reanchors,
    ),
)

BY_NAME = {mutant.name: mutant for mutant in MUTANTS}


@contextlib.contextmanager
def apply(name: str) -> Iterator[None]:
    """The model server with mutant `name` patched in, for the block's duration."""
    with contextlib.ExitStack() as stack:
        BY_NAME[name].patch(stack)
        yield
