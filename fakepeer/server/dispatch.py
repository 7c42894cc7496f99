"""Dispatch: one invoke sent to a worker and its answer read, checked and written on the timeline.

Apart because every kind of work (discovery, a forward or compensation attempt, a redelivery)
sends through it: the scripted transport fault, the host's effect trace and its invariants, the
answers a mode allows, and how a missing answer is named are decided here once.
"""

from __future__ import annotations

from fakepeer.server.host import HostFault
from fakepeer.server.releases import Connection
from fakepeer.server.state import RunState
from fakepeer.server.timeline import Entry
from fakepeer.session.effects import check_delivered, check_invariants

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


#: How a timeline names an invoke whose answer never came (D-HTTP-STATUS: a generic status is no
#: answer, so its outcome is unknown, as a lost answer's).
_FAULT_NOTES = {
    "lost_answer": "answer lost",
    "http_502": "HTTP 502, outcome unknown",
    "http_503": "HTTP 503, outcome unknown",
    "http_timeout": "HTTP timeout, outcome unknown",
    "http_reset": "connection reset, outcome unknown",
}


class Dispatch:
    """Sending one invoke (with its scripted fault, if any) and reading its answer."""

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
