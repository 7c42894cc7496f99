"""Deadlines and timers: a run's whole-run deadline, checked before each piece of its work and
timing it out when it passes (a child bounded by it first), and durable timers anchored at
acceptance [S83, S85, S101].

Apart because both are instants on the virtual clock the run owns: the deadline ends the run,
a timer settles one of its steps, and a server restart schedules both again at the recorded
instants.
"""

from __future__ import annotations

from fakepeer.server.state import TIMED_OUT, RunState, server_error


class Timing:
    """The run deadline (and the cancellation it causes) and durable timers."""

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
