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
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from unittest import mock

from fakepeer.server import events as events_module
from fakepeer.server import state as state_module
from fakepeer.server.events import EventLog
from fakepeer.server.loop import ModelServer
from fakepeer.server.releases import Connection
from fakepeer.server.retry import DEFAULT_BACKOFF_MS, RetryPolicy
from fakepeer.server.state import (
    BLOCKED,
    COMPENSATING,
    FAILED,
    RUNNING,
    TIMED_OUT,
    Operation,
    RunState,
    server_error,
)

Patch = Callable[[contextlib.ExitStack], None]


@dataclass(frozen=True)
class ServerMutant:
    name: str
    fault: str  # what the faulty server does, for the matrix
    patch: Patch


def _method(stack: contextlib.ExitStack, owner: type, name: str, replacement: object) -> None:
    stack.enter_context(mock.patch.object(owner, name, replacement))


def _global(
    method: types.FunctionType, name: str, replacement: object
) -> contextlib.AbstractContextManager[object]:
    """A patch of the module-level `name` the model server's `method` reads, in the module that
    defines the method: the patch follows the method to whichever module it lives in, and a
    method that no longer reads the name is an error here, never a mutant that changes nothing."""
    if name not in _names_read(method.__code__):
        raise AssertionError(f"{method.__qualname__} does not read {name!r}: nothing to mutate")
    return mock.patch.object(sys.modules[method.__module__], name, replacement)


def _names_read(code: types.CodeType) -> set[str]:
    """The global and attribute names a function's code reads, nested functions' included."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_read(constant)
    return names


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


def _new_run_without_function_timeouts(
    self: ModelServer, *args: object, **kwargs: object
) -> RunState:
    """`_new_run` as if no function declared a run timeout."""
    saved = dict(self.env.functions)
    self.env.functions = {key: None for key in saved}
    try:
        return _NEW_RUN(self, *args, **kwargs)
    finally:
        self.env.functions = saved


def _bound_dropped(source: str) -> Patch:
    def patch(stack: contextlib.ExitStack) -> None:
        def new_run(self: ModelServer, *args: object, **kwargs: object) -> RunState:
            if source == "function":
                return _new_run_without_function_timeouts(self, *args, **kwargs)
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
        run.error = server_error("sdk.timeout", f"the run's {run.deadline_source} deadline passed")
        self._finish(run, TIMED_OUT)

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


# ---------------------------------------------------------------- classification (S6, S8)

_ATTEMPT_UNKNOWN = ModelServer._attempt_unknown


def _lost_attempt_repeated(stack: contextlib.ExitStack) -> None:
    """S6 broken: a forward or compensation attempt whose outcome was lost is handled as the
    repeatable orchestration a discovery is: invoked again at once as the *same* attempt (no
    backoff, no next ordinal). The losses still count against the policy, so a run whose every
    answer is lost still ends."""

    def attempt_unknown(self: ModelServer, run: RunState, operation: Operation) -> None:
        lost = operation.__dict__.get("mutant_lost", 0) + 1
        operation.__dict__["mutant_lost"] = lost
        if operation.policy.retries_after(lost, None):
            self._note(run, f"{operation.step_id} #{operation.attempt} invoked again at once")
            self._forward_soon(run, operation)
            return
        operation.attempt = operation.policy.max_attempts  # exhausted: fail as the model does
        _ATTEMPT_UNKNOWN(self, run, operation)

    _method(stack, ModelServer, "_attempt_unknown", attempt_unknown)


_DISPATCH = ModelServer._dispatch


def _lost_discovery_counted(stack: contextlib.ExitStack) -> None:
    """S8 broken: recovery inferred from the transport, not the classification: a discovery whose
    answer never came (lost, host killed) is recovered as a lost effectful attempt: invoked again
    only after the default backoff, and the run fails with `server.attempt_lost` once the default
    retry policy's attempts are spent."""

    def dispatch(
        self: ModelServer,
        run: RunState,
        mode: str,
        body: dict,
        target: dict | None = None,
        worker: Connection | None = None,
    ) -> tuple:
        entry, answer = _DISPATCH(self, run, mode, body, target, worker)
        if mode != "discover" or answer is not None:
            return entry, answer
        lost = run.__dict__.get("mutant_lost", 0) + 1
        run.__dict__["mutant_lost"] = lost
        self._discovering.add(run.run_id)  # so the loop's at-once rediscovery schedules nothing
        if RetryPolicy().retries_after(lost, None):

            def again() -> None:
                self._discovering.discard(run.run_id)
                self._discover(run)

            self._keep(run, self.scheduler.after(DEFAULT_BACKOFF_MS, again, "discover retry"))
        else:
            error = server_error("server.attempt_lost", "discovery answers lost")
            error["retryable"] = True
            self._uncaught(run, error)
        return entry, answer

    _method(stack, ModelServer, "_dispatch", dispatch)


# ------------------------------------------------- the audit of server-side sentences

_REGISTER_WAIT = ModelServer._register_wait


def _wait_matches_earlier_event(stack: contextlib.ExitStack) -> None:
    """S92 broken: the registration boundary ignored: an event accepted before the wait
    registered settles it (the newest such event, at registration)."""

    def register(self: ModelServer, run: RunState, declaration: dict) -> None:
        _REGISTER_WAIT(self, run, declaration)
        wait = self.events.find_wait(run.run_id, declaration["step_id"])
        for event in reversed(self.events.events):
            if wait is not None and not wait.settled and event.name == wait.event:
                if all(event.metadata.get(k) == v for k, v in wait.correlation.items()):
                    wait.settled = True
                    run.settle(wait.step_id, {"status": "completed", "value": event.payload})
                    self._discover_soon(run)

    _method(stack, ModelServer, "_register_wait", register)


def _settled_declarations_unwound(stack: contextlib.ExitStack) -> None:
    """S86, S96, S103, S111 broken: every completed declaration (timer, wait, child, emission)
    joins the unwind, not only steps."""
    every = frozenset({"step", "timer", "wait", "invoke", "emit"})
    stack.enter_context(mock.patch.object(state_module, "UNWOUND_TYPES", every))


def _uncompensated_steps_not_targeted(stack: contextlib.ExitStack) -> None:
    """S115 broken: the unwind passes over a completed step whose declaration reported no
    compensator instead of offering it a target."""

    def uncaught(self: ModelServer, run: RunState, error: dict) -> None:
        run.error = error
        run.unwind = [
            step_id
            for step_id in reversed(run.completion_order)
            if run.declarations.get(step_id, {}).get("has_compensation")
        ]
        if not run.unwind:
            self._finish(run, FAILED)
            return
        run.status = COMPENSATING
        self._unwind_next(run)

    _method(stack, ModelServer, "_uncaught", uncaught)


def _obsolete_forward_retried(stack: contextlib.ExitStack) -> None:
    """S117 broken: a forward target_not_found is retried as a failed attempt instead of making
    the target obsolete and rediscovering the function."""

    def not_found(self: ModelServer, run: RunState, operation: Operation) -> None:
        if operation.phase == "forward":
            error = server_error("server.target_not_found", operation.step_id)
            error["retryable"] = True
            self._attempt_failed(run, operation, error)
            return
        _NOT_FOUND(self, run, operation)

    _method(stack, ModelServer, "_not_found", not_found)


def _child_outcome_dropped(stack: contextlib.ExitStack) -> None:
    """S100 broken: the child's accepted terminal outcome is not the parent's step result: the
    parent's step completes with null whatever the child returned or how it ended."""

    def settle_parent(self: ModelServer, child: RunState) -> None:
        parent = self.runs[child.parent[0]]  # type: ignore[index]
        step_id = child.parent[1]  # type: ignore[index]
        if parent.terminal or step_id in parent.history:
            return
        parent.settle(step_id, {"status": "completed", "value": {"t": "null"}})
        self._discover_soon(parent)

    _method(stack, ModelServer, "_settle_parent", settle_parent)


_ACCEPT_EMISSION = ModelServer._accept_emission


def _emission_metadata_dropped(stack: contextlib.ExitStack) -> None:
    """S106 broken: an emitted event is accepted without the routing metadata it declared."""

    def accept(self: ModelServer, run: RunState, declaration: dict) -> object:
        return _ACCEPT_EMISSION(self, run, {**declaration, "metadata": {}})

    _method(stack, ModelServer, "_accept_emission", accept)


def _triggers_ignored(stack: contextlib.ExitStack) -> None:
    """S13 broken: an accepted event settles waits but starts none of the functions its
    triggers name."""
    _method(stack, ModelServer, "triggers_at", lambda self, generation_id: [])


_EMIT = ModelServer._emit


def _receipt_not_identity(stack: contextlib.ExitStack) -> None:
    """S110 broken: the emission settles with the event's name, not its identity."""

    def emit(self: ModelServer, run: RunState, declaration: dict) -> None:
        self._accept_emission(run, declaration)
        value = {"t": "str", "v": declaration["event"]}
        run.settle(declaration["step_id"], {"status": "completed", "value": value})
        self._discover_soon(run)

    _method(stack, ModelServer, "_emit", emit)


_ATTEMPT_FAILED = ModelServer._attempt_failed


def _step_failure_compensates(stack: contextlib.ExitStack) -> None:
    """S167 broken: a step's terminal failure moves the run into compensation at once, as if it
    had escaped the workflow, instead of being supplied to the next discovery."""

    def attempt_failed(self: ModelServer, run: RunState, operation: Operation, error: dict) -> None:
        _ATTEMPT_FAILED(self, run, operation, error)
        entry = run.history.get(operation.step_id)
        if (
            operation.phase == "forward"
            and entry is not None
            and entry["status"] == "failed"
            and not run.terminal
            and run.status != COMPENSATING
        ):
            self._uncaught(run, error)

    _method(stack, ModelServer, "_attempt_failed", attempt_failed)


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


# ------------------------------------------------- blocked runs (D-BLOCKED-UNWIND, issue 36)

_RESUME = ModelServer._resume


def _blocked_rediscovered_forward(stack: contextlib.ExitStack) -> None:
    """The model server before issue 36: a code change rediscovers every blocked run as if it
    were going forward, whatever it blocked on, so a run blocked mid-unwind unwinds again from
    its newest completion (completed compensations offered again) or completes."""

    def resume(self: ModelServer, run: RunState) -> None:
        run.blocked_on, run.blocker, run.status = None, None, RUNNING
        self._discover_soon(run)

    _method(stack, ModelServer, "_resume", resume)


def _blocked_resumed_at_next_attempt(phase: str) -> Patch:
    """The blocked target of `phase` is offered again as the next attempt, as if the
    definition_blocked answer had been a physical attempt."""

    def patch(stack: contextlib.ExitStack) -> None:
        def resume(self: ModelServer, run: RunState) -> None:
            if run.blocked_on is not None and run.blocked_on[1] == phase:
                operation = run.operations.get(run.blocked_on)
                if operation is not None:
                    operation.attempt += 1
            _RESUME(self, run)

        _method(stack, ModelServer, "_resume", resume)

    return patch


def _blocked_compensation_skipped(stack: contextlib.ExitStack) -> None:
    """After the code change the blocked compensation target is recorded as a skip and the
    unwind goes on with the next one."""

    def resume(self: ModelServer, run: RunState) -> None:
        if run.blocked_on is not None and run.blocked_on[1] == "compensation":
            step_id = run.blocked_on[0]
            run.blocked_on, run.blocker, run.status = None, None, COMPENSATING
            run.skipped.append(step_id)
            self._unwind_next(run)
            return
        _RESUME(self, run)

    _method(stack, ModelServer, "_resume", resume)


def _blocked_forward_made_obsolete(stack: contextlib.ExitStack) -> None:
    """The code change makes the blocked forward target obsolete, so the step declared again is
    a new operation (derived id, attempt 1) instead of the same one."""

    def resume(self: ModelServer, run: RunState) -> None:
        if run.blocked_on is not None and run.blocked_on[1] == "forward":
            operation = run.operations.get(run.blocked_on)
            if operation is not None:
                operation.obsolete = True
                run.declarations.pop(operation.step_id, None)
        _RESUME(self, run)

    _method(stack, ModelServer, "_resume", resume)


def _blocked_never_resumed(stack: contextlib.ExitStack) -> None:
    """A code change leaves blocked runs blocked."""
    _method(stack, ModelServer, "_resume", lambda self, run: None)


def _blocked_deadline_ignored(stack: contextlib.ExitStack) -> None:
    """A blocked run's deadline is not enforced: nothing is in flight, so nothing times out."""

    def deadline(self: ModelServer, run: RunState) -> None:
        if run.status == BLOCKED:
            return
        _DEADLINE(self, run)

    _method(stack, ModelServer, "_deadline", deadline)


def _blocked_unwind_cause_lost(stack: contextlib.ExitStack) -> None:
    """A run blocked mid-unwind is not taken for unwinding: its deadline's sdk.timeout record
    loses the failure being undone as its cause (and routing its need of `compensation`)."""
    unwinding = property(lambda self: self.status == COMPENSATING)
    _method(stack, RunState, "unwinding", unwinding)


def _restart_forgets_blocked_target(stack: contextlib.ExitStack) -> None:
    """What a run blocked on is volatile: a server restart forgets it, so the code change after
    it rediscovers a run blocked mid-unwind forward."""

    def restart(self: ModelServer) -> None:
        for run in self.runs.values():
            run.blocked_on = None
        _RESTART(self)

    _method(stack, ModelServer, "_server_restart", restart)


# ------------------------------------------ server clauses the scenarios missed (issue 36)

_ROUTE = ModelServer._route


def _oldest_wait_only(stack: contextlib.ExitStack) -> None:
    """An accepted event settles only the oldest wait it matches, not every one [S94]."""
    matching = EventLog.matching_waits
    _method(stack, EventLog, "matching_waits", lambda self, event: matching(self, event)[:1])


_DECLARED = ModelServer._declared


def _stale_wait_registered(stack: contextlib.ExitStack) -> None:
    """A redelivered discovery's wait declaration of a wait settled since registers a new wait
    (D-STALE-ANSWER broken for waits): its timeout or a later event settles the step again."""

    def declared(
        self: ModelServer,
        run: RunState,
        declaration: dict,
        entry: object,
        sent: list[dict] | None = None,
    ) -> None:
        step_id = declaration["step_id"]
        if (
            declaration["type"] == "wait"
            and step_id in run.history
            and sent is not None
            and all(item["step_id"] != step_id for item in sent)
        ):
            self._register_wait(run, declaration)
            return
        _DECLARED(self, run, declaration, entry, sent)

    _method(stack, ModelServer, "_declared", declared)


_SCHEDULE_WAIT_TIMEOUT = ModelServer._schedule_wait_timeout


def _matched_wait_times_out(stack: contextlib.ExitStack) -> None:
    """A matched wait's timeout still fires and replaces the match with sdk.timeout [S94]."""

    def schedule(self: ModelServer, run: RunState, wait: object) -> None:
        def timeout() -> None:
            if run.terminal:
                return
            wait.settled = True  # type: ignore[attr-defined]
            message = f"no {wait.event} event before the timeout"  # type: ignore[attr-defined]
            error = server_error("sdk.timeout", message)
            run.settle(wait.step_id, {"status": "failed", "error": error})  # type: ignore[attr-defined]
            self._discover_soon(run)

        at = wait.timeout_at_ms  # type: ignore[attr-defined]
        self._keep(run, self.scheduler.at(at, timeout, "wait timeout"))

    _method(stack, ModelServer, "_schedule_wait_timeout", schedule)


def _budget_counts_completed_only(stack: contextlib.ExitStack) -> None:
    """The replay budget counts completed entries only, not terminal failures [S95]."""

    def within(self: ModelServer, run: RunState) -> bool:
        completed = [e for e in run.history.values() if e["status"] == "completed"]
        return len(completed) < self.policy.history_limit

    _method(stack, ModelServer, "_within_budget", within)


_OVER_BUDGET = ModelServer._over_budget


def _past_budget_work_created(kind: str) -> Patch:
    """A declaration of `kind` past the replay budget creates its work (the event accepted, the
    child materialized) before it is refused, not "refused before it commits" [S95]."""

    def patch(stack: contextlib.ExitStack) -> None:
        def over_budget(self: ModelServer, run: RunState, declaration: dict) -> None:
            if declaration["type"] == kind == "emit":
                self._accept_emission(run, declaration)
            elif declaration["type"] == kind == "invoke":
                self._start_child(run, declaration)
            _OVER_BUDGET(self, run, declaration)

        _method(stack, ModelServer, "_over_budget", over_budget)

    return patch


_START_CHILD = ModelServer._start_child


def _child_identity_from_parent_only(stack: contextlib.ExitStack) -> None:
    """A child's identity is derived from the scope and parent run only, without the step, so a
    second invoke names the first child and no second child is created [S99]."""

    def start_child(self: ModelServer, run: RunState, declaration: dict) -> None:
        def without_step(prefix: str, *facts: object) -> str:
            return state_module.derived_id(prefix, *facts[:-1])

        with _global(_START_CHILD, "derived_id", without_step):
            _START_CHILD(self, run, declaration)

    _method(stack, ModelServer, "_start_child", start_child)


_REJECTED = ModelServer._rejected


def _final_rejection_offered_again(stack: contextlib.ExitStack) -> None:
    """A rejected_before_start that is not retryable is offered again, as a retryable one is,
    instead of applying its obsolescence policy [S123]."""

    def rejected(self: ModelServer, run: RunState, operation: Operation, reason: dict) -> None:
        _REJECTED(self, run, operation, {**reason, "retryable": True})

    _method(stack, ModelServer, "_rejected", rejected)


def _deadline_as_delay(stack: contextlib.ExitStack) -> None:
    """A timer's absolute deadline is taken as a delay from acceptance [S82, S83]."""

    def arm(self: ModelServer, run: RunState, declaration: dict) -> None:
        if "deadline_ms" in declaration:
            delay = max(int(declaration["deadline_ms"]), 0)
            declaration = {"type": "timer", "step_id": declaration["step_id"], "delay_ms": delay}
        _ARM(self, run, declaration)

    _method(stack, ModelServer, "_arm_timer", arm)


def _elapsed_deadline_never_armed(stack: contextlib.ExitStack) -> None:
    """A timer whose absolute deadline already elapsed is never armed, so it never settles
    ("settles as soon as it can be dispatched") [S83]."""

    def arm(self: ModelServer, run: RunState, declaration: dict) -> None:
        if "deadline_ms" in declaration and int(declaration["deadline_ms"]) < self.clock.now_ms:
            return
        _ARM(self, run, declaration)

    _method(stack, ModelServer, "_arm_timer", arm)


def _zero_invoke_timeout_as_none(stack: contextlib.ExitStack) -> None:
    """A zero invoke timeout is taken as no timeout, so the child runs unbounded [S101, S102]."""

    def start_child(self: ModelServer, run: RunState, declaration: dict) -> None:
        if str(declaration.get("timeout_ms")) == "0":
            declaration = {k: v for k, v in declaration.items() if k != "timeout_ms"}
        _START_CHILD(self, run, declaration)

    _method(stack, ModelServer, "_start_child", start_child)


def _correlation_ignored(stack: contextlib.ExitStack) -> None:
    """Matching ignores the wait's correlation: any event of the name settles it [S91]."""
    stack.enter_context(mock.patch.object(events_module, "correlation_matches", lambda c, m: True))


def _correlation_exact(stack: contextlib.ExitStack) -> None:
    """Matching needs the event's metadata to equal the correlation, not to contain it: an
    event carrying more pairs than declared settles nothing [S91]."""
    stack.enter_context(
        mock.patch.object(events_module, "correlation_matches", lambda c, m: c == m)
    )


def _missing_pair_matches_empty(stack: contextlib.ExitStack) -> None:
    """A declared pair whose value is empty matches an event that lacks the key ("every
    declared pair must appear") [S91]."""

    def matches(correlation: dict[str, str], metadata: dict[str, str]) -> bool:
        return all(metadata.get(key, "") == value for key, value in correlation.items())

    stack.enter_context(mock.patch.object(events_module, "correlation_matches", matches))


def _event_name_ignored(stack: contextlib.ExitStack) -> None:
    """Matching ignores the event name: any event with the correlation settles the wait [S90]."""

    def matching(self: EventLog, event: object) -> list:
        return [
            wait
            for wait in self.waits
            if not wait.settled
            and wait.position < event.position  # type: ignore[attr-defined]
            and events_module.correlation_matches(wait.correlation, event.metadata)  # type: ignore[attr-defined]
        ]

    _method(stack, EventLog, "matching_waits", matching)


def _timeout_not_sdk_timeout(stack: contextlib.ExitStack) -> None:
    """An elapsed wait timeout settles with another category than sdk.timeout [S94]."""

    def wrong_category(category: str, message: str) -> dict:
        if category == "sdk.timeout" and message.startswith("no "):
            category = "sdk.cancelled"
        return server_error(category, message)

    stack.enter_context(_global(_SCHEDULE_WAIT_TIMEOUT, "server_error", wrong_category))


def _unrecordable_match_completed(stack: contextlib.ExitStack) -> None:
    """A matched payload the durable record cannot carry completes the wait all the same [S95]."""
    stack.enter_context(_global(_ROUTE, "MAX_VALUE_BYTES", 1 << 62))


def _non_retryable_failure_retried(stack: contextlib.ExitStack) -> None:
    """A callback failure with `retryable: false` is retried while attempts remain."""

    def retries_after(self: RetryPolicy, attempt: int, error: dict | None) -> bool:
        return attempt < self.max_attempts

    _method(stack, RetryPolicy, "retries_after", retries_after)


def _policy_default_overrides(stack: contextlib.ExitStack) -> None:
    """The policy default replaces a function's own declared run timeout [S46]."""

    def new_run(self: ModelServer, *args: object, **kwargs: object) -> RunState:
        if self.policy_timeout_ms is None:
            return _NEW_RUN(self, *args, **kwargs)
        return _new_run_without_function_timeouts(self, *args, **kwargs)

    _method(stack, ModelServer, "_new_run", new_run)


def _maximum_exclusive(stack: contextlib.ExitStack) -> None:
    """Activation rejects a run timeout equal to the policy maximum, not only one above [S47]."""

    def publish(self: ModelServer) -> None:
        maximum = self.store.policy_max_timeout_ms
        if maximum is not None:
            self.store.policy_max_timeout_ms = maximum - 1
        try:
            _PUBLISH(self)
        finally:
            self.store.policy_max_timeout_ms = maximum

    _method(stack, ModelServer, "_publish", publish)


def _parent_bound_not_remaining(stack: contextlib.ExitStack) -> None:
    """A child's parent bound is the parent's whole timeout from the child's creation, not the
    parent's remaining deadline [S101]."""

    def new_run(self: ModelServer, *args: object, **kwargs: object) -> RunState:
        bounds = []
        for instant, source in kwargs.pop("bounds", ()):
            if source == "parent" and instant is not None:
                parent = self.runs[kwargs["parent"][0]]  # type: ignore[index]
                instant = self.clock.now_ms + (instant - parent.created_ms)
            bounds.append((instant, source))
        return _NEW_RUN(self, *args, bounds=bounds, **kwargs)

    _method(stack, ModelServer, "_new_run", new_run)


_FINISH = ModelServer._finish


def _children_outlive_parent(stack: contextlib.ExitStack) -> None:
    """A run's live children are not cancelled when it ends [S100]."""

    def finish(self: ModelServer, run: RunState, status: str) -> None:
        children = [
            child
            for child in self.runs.values()
            if child.parent is not None and child.parent[0] == run.run_id and not child.terminal
        ]
        for child in children:
            child.parent = None  # detached: the parent's end does not reach it
        _FINISH(self, run, status)

    _method(stack, ModelServer, "_finish", finish)


def _admission_refusal_next_attempt(stack: contextlib.ExitStack) -> None:
    """A retryable rejected_before_start is counted as a physical attempt: the work is offered
    again as the next attempt, and the refusals count against the retry policy."""

    def rejected(self: ModelServer, run: RunState, operation: Operation, reason: dict) -> None:
        if reason.get("retryable"):
            error = server_error("server.rejected", "refused before start")
            error["retryable"] = True
            self._attempt_failed(run, operation, error)
            return
        _REJECTED(self, run, operation, reason)

    _method(stack, ModelServer, "_rejected", rejected)


def _compensation_not_retried(stack: contextlib.ExitStack) -> None:
    """A compensator's failure ends the unwind at once, whatever its step's retry policy."""

    def attempt_failed(self: ModelServer, run: RunState, operation: Operation, error: dict) -> None:
        if operation.phase == "compensation":
            operation.attempt = operation.policy.max_attempts
        _ATTEMPT_FAILED(self, run, operation, error)

    _method(stack, ModelServer, "_attempt_failed", attempt_failed)


def _failed_steps_unwound(stack: contextlib.ExitStack) -> None:
    """A step whose forward work failed for good joins the unwind, as a completed one does."""
    original = RunState.settle

    def settle(self: RunState, step_id: str, entry: dict) -> None:
        original(self, step_id, entry)
        declaration = self.declarations.get(step_id, {})
        if entry["status"] == "failed" and declaration.get("type") == "step":
            self.completion_order.append(step_id)

    _method(stack, RunState, "settle", settle)


def _zero_wait_timeout_never_fires(stack: contextlib.ExitStack) -> None:
    """A zero wait timeout is taken as no timeout: the wait never times out [S97]."""

    def register(self: ModelServer, run: RunState, declaration: dict) -> None:
        if str(declaration.get("timeout_ms")) == "0":
            declaration = {**declaration, "timeout_ms": str(1 << 40)}
        _REGISTER(self, run, declaration)

    _method(stack, ModelServer, "_register_wait", register)


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
        "lost-attempt-repeated-like-discovery",
        "a lost forward or compensation attempt is invoked again at once as the same attempt, "
        "as a repeatable discovery is",
        _lost_attempt_repeated,
    ),
    ServerMutant(
        "lost-discovery-recovered-like-attempt",
        "a lost discovery is recovered as an effectful attempt: after a backoff, and the run "
        "fails once the default retry policy is spent",
        _lost_discovery_counted,
    ),
    ServerMutant(
        "wait-matches-earlier-event",
        "an event accepted before the wait registered settles it",
        _wait_matches_earlier_event,
    ),
    ServerMutant(
        "settled-declarations-unwound",
        "completed timers, waits, children and emissions join the unwind",
        _settled_declarations_unwound,
    ),
    ServerMutant(
        "uncompensated-steps-not-targeted",
        "the unwind skips a completed step whose declaration reported no compensator",
        _uncompensated_steps_not_targeted,
    ),
    ServerMutant(
        "obsolete-forward-retried",
        "a forward target_not_found is retried instead of making the target obsolete",
        _obsolete_forward_retried,
    ),
    ServerMutant(
        "child-outcome-dropped",
        "the parent's step completes with null whatever the child's outcome",
        _child_outcome_dropped,
    ),
    ServerMutant(
        "emission-metadata-dropped",
        "an emitted event is accepted without its routing metadata",
        _emission_metadata_dropped,
    ),
    ServerMutant(
        "triggers-ignored", "an accepted event starts no triggered function", _triggers_ignored
    ),
    ServerMutant(
        "receipt-not-event-identity",
        "an emission settles with the event's name instead of its identity",
        _receipt_not_identity,
    ),
    ServerMutant(
        "step-failure-compensates-at-once",
        "a step's terminal failure starts compensation without a discovery",
        _step_failure_compensates,
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
    ServerMutant(
        "blocked-unwind-rediscovered-forward",
        "a code change rediscovers a run blocked mid-unwind as if it were going forward",
        _blocked_rediscovered_forward,
    ),
    ServerMutant(
        "blocked-compensation-resumed-at-next-attempt",
        "a blocked compensation target is offered again as the next attempt",
        _blocked_resumed_at_next_attempt("compensation"),
    ),
    ServerMutant(
        "blocked-forward-resumed-at-next-attempt",
        "a blocked forward target is offered again as the next attempt",
        _blocked_resumed_at_next_attempt("forward"),
    ),
    ServerMutant(
        "blocked-compensation-target-skipped",
        "after the code change a blocked compensation target is skipped and the unwind goes on",
        _blocked_compensation_skipped,
    ),
    ServerMutant(
        "blocked-forward-target-made-obsolete",
        "after the code change a blocked forward target is obsolete: a new operation",
        _blocked_forward_made_obsolete,
    ),
    ServerMutant(
        "blocked-run-never-resumed",
        "a code change leaves blocked runs blocked",
        _blocked_never_resumed,
    ),
    ServerMutant(
        "blocked-run-deadline-ignored",
        "a blocked run's deadline is not enforced",
        _blocked_deadline_ignored,
    ),
    ServerMutant(
        "blocked-unwind-deadline-loses-cause",
        "a deadline reached while blocked mid-unwind drops the failure being undone as its cause",
        _blocked_unwind_cause_lost,
    ),
    ServerMutant(
        "restart-forgets-blocked-target",
        "a server restart forgets which target a blocked run blocked on",
        _restart_forgets_blocked_target,
    ),
    ServerMutant(
        "event-settles-oldest-wait-only",
        "an accepted event settles only the oldest wait it matches",
        _oldest_wait_only,
    ),
    ServerMutant(
        "stale-wait-declaration-registers-again",
        "a redelivered wait declaration of a wait settled since registers a new wait",
        _stale_wait_registered,
    ),
    ServerMutant(
        "matched-wait-times-out",
        "a matched wait's timeout still fires and replaces the match",
        _matched_wait_times_out,
    ),
    ServerMutant(
        "replay-budget-counts-completed-only",
        "the replay budget counts completed entries only, not terminal failures",
        _budget_counts_completed_only,
    ),
    ServerMutant(
        "emission-past-budget-accepted",
        "an emission past the replay budget is accepted before the declaration is refused",
        _past_budget_work_created("emit"),
    ),
    ServerMutant(
        "child-past-budget-materialized",
        "a child past the replay budget is materialized before the declaration is refused",
        _past_budget_work_created("invoke"),
    ),
    ServerMutant(
        "child-identity-from-parent-only",
        "a child's identity is derived from the parent run only: a second invoke reuses it",
        _child_identity_from_parent_only,
    ),
    ServerMutant(
        "final-rejection-offered-again",
        "a rejected_before_start that is not retryable is offered again",
        _final_rejection_offered_again,
    ),
    ServerMutant(
        "timer-deadline-taken-as-delay",
        "a timer's absolute deadline is taken as a delay",
        _deadline_as_delay,
    ),
    ServerMutant(
        "elapsed-deadline-never-armed",
        "a timer whose deadline already elapsed is never armed",
        _elapsed_deadline_never_armed,
    ),
    ServerMutant(
        "zero-invoke-timeout-taken-as-none",
        "a zero invoke timeout is taken as no timeout",
        _zero_invoke_timeout_as_none,
    ),
    ServerMutant(
        "correlation-ignored",
        "matching ignores the wait's correlation",
        _correlation_ignored,
    ),
    ServerMutant(
        "correlation-matched-exactly",
        "an event carrying more pairs than the correlation declares settles nothing",
        _correlation_exact,
    ),
    ServerMutant(
        "correlation-missing-pair-matches-empty",
        "a declared pair with an empty value matches an event that lacks the key",
        _missing_pair_matches_empty,
    ),
    ServerMutant(
        "event-name-ignored",
        "matching ignores the event name",
        _event_name_ignored,
    ),
    ServerMutant(
        "wait-timeout-not-sdk-timeout",
        "an elapsed wait timeout settles with another category than sdk.timeout",
        _timeout_not_sdk_timeout,
    ),
    ServerMutant(
        "unrecordable-match-completed",
        "a matched payload the record cannot carry completes the wait",
        _unrecordable_match_completed,
    ),
    ServerMutant(
        "non-retryable-failure-retried",
        "a failure with retryable false is retried while attempts remain",
        _non_retryable_failure_retried,
    ),
    ServerMutant(
        "policy-default-overrides-function-timeout",
        "the policy default replaces a function's declared run timeout",
        _policy_default_overrides,
    ),
    ServerMutant(
        "policy-maximum-exclusive",
        "activation rejects a run timeout equal to the policy maximum",
        _maximum_exclusive,
    ),
    ServerMutant(
        "parent-bound-not-remaining",
        "a child's parent bound is the parent's whole timeout from the child's creation",
        _parent_bound_not_remaining,
    ),
    ServerMutant(
        "children-outlive-parent",
        "a run's live children are not cancelled when it ends",
        _children_outlive_parent,
    ),
    ServerMutant(
        "admission-refusal-next-attempt",
        "a retryable rejected_before_start is counted as a physical attempt",
        _admission_refusal_next_attempt,
    ),
    ServerMutant(
        "compensation-not-retried",
        "a compensator's failure ends the unwind at once, whatever its retry policy",
        _compensation_not_retried,
    ),
    ServerMutant(
        "failed-steps-unwound",
        "a step whose forward work failed for good joins the unwind",
        _failed_steps_unwound,
    ),
    ServerMutant(
        "zero-wait-timeout-never-fires",
        "a zero wait timeout is taken as no timeout",
        _zero_wait_timeout_never_fires,
    ),
)

BY_NAME = {mutant.name: mutant for mutant in MUTANTS}


@contextlib.contextmanager
def apply(name: str) -> Iterator[None]:
    """The model server with mutant `name` patched in, for the block's duration."""
    with contextlib.ExitStack() as stack:
        BY_NAME[name].patch(stack)
        yield
