"""Scripted faults and the script: what a scenario makes happen at an instant (events, ambient
and code changes, admission, started runs, workers, host and server restarts) and what its faults
do to invokes (a redelivered request, a rediscovery) [S07, S52, S53].

Apart because none of it is the server's normal course: it is what a lifecycle scenario injects,
and the recovery the server owes it (D-STALE-ANSWER, D-SERVER-RESTART).
"""

from __future__ import annotations

from fakepeer.server.dispatch import _ALLOWED
from fakepeer.server.host import HostFault
from fakepeer.server.releases import phantom_body
from fakepeer.server.script import ScriptItem
from fakepeer.server.state import BLOCKED, RUNNING, RunState
from fakepeer.server.timeline import Entry
from fakepeer.session.effects import check_invariants


class Faults:
    """The scenario's script, the faults it injects into invokes, and a server restart."""

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
