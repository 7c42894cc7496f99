"""What one simulation produced, as lifecycle scenarios compare it and `simulate` prints it.

Apart from the loop so that a report can be read (compared, rendered, merged) without loading
the model server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fakepeer.server.events import AcceptedEvent
from fakepeer.server.state import RunState
from fakepeer.server.timeline import Timeline


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
