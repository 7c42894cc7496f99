"""Attempts: targeted forward and compensation work, one physical attempt at a time, its
answer fenced, retried by the declared policy, and the unwind of a failed run [S113-S123,
S142, S143, S146].

Apart because an attempt's identity (operation id, attempt, fencing generation), what an
unknown outcome means and the order of compensation are the rules most often read together
when a run's end is wrong; nothing here discovers or routes events.
"""

from __future__ import annotations

from fakepeer.server.retry import ADMISSION_RETRY_MS
from fakepeer.server.state import (
    COMPENSATING,
    COMPENSATION_FAILED,
    FAILED,
    Operation,
    RunState,
    server_error,
)
from fakepeer.server.timeline import Entry

_TARGETED_ANSWERS = {
    "forward": ("step_completed", "step_failed"),
    "compensate": ("compensation_completed", "compensation_failed"),
}


class Attempts:
    """Targeted attempts, retries, rejections and obsolescence, and unwinding by compensation."""

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
