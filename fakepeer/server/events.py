"""Accepted events, registered waits, and routing: subset correlation, registration boundaries.

RFD 2: "The registration commits in the transaction that accepts the declaration, and that commit
is the registration boundary: only an event the server accepts after it can ever match". Each
accepted event and each registration takes the next position of one commit sequence, so "after"
is a comparison of positions, never of clock readings (several commits share one instant).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AcceptedEvent:
    """One event record: identity, name, payload (a tagged value), correlation metadata."""

    event_id: str
    name: str
    payload: dict
    metadata: dict[str, str]
    accepted_ms: int
    position: int
    source: str  # "submitted" or the emitting (run, step)
    routing_generation: str | None = None  # the workspace routing generation it acknowledged


@dataclass
class Wait:
    """A registered event wait of (run, step)."""

    run_id: str
    step_id: str
    event: str
    correlation: dict[str, str]
    position: int
    registered_ms: int
    timeout_at_ms: int
    settled: bool = False


def correlation_matches(correlation: dict[str, str], metadata: dict[str, str]) -> bool:
    """RFD 2: "every declared pair must appear in the matched event with the same value, and the
    event may carry more pairs than the registration declared"."""
    return all(metadata.get(key) == value for key, value in correlation.items())


@dataclass
class EventLog:
    """The workspace's accepted events and the waits registered against them."""

    events: list[AcceptedEvent] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)
    by_identity: dict[str, AcceptedEvent] = field(default_factory=dict)
    _positions: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next_position(self) -> int:
        return next(self._positions)

    def accept(
        self,
        event_id: str,
        name: str,
        payload: dict,
        metadata: dict[str, str],
        now_ms: int,
        source: str,
        routing_generation: str | None = None,
    ) -> tuple[AcceptedEvent, bool]:
        """Accept an event once per identity: (the record, whether it is new).

        RFD 2: "one event record, one idempotency claim, one workspace list entry, and one
        fan-out obligation": a second acceptance of the same identity returns the first record.
        """
        earlier = self.by_identity.get(event_id)
        if earlier is not None:
            return earlier, False
        event = AcceptedEvent(
            event_id,
            name,
            payload,
            dict(metadata),
            now_ms,
            self.next_position(),
            source,
            routing_generation,
        )
        self.events.append(event)
        self.by_identity[event_id] = event
        return event, True

    def register(self, wait: Wait) -> None:
        self.waits.append(wait)

    def find_wait(self, run_id: str, step_id: str) -> Wait | None:
        for wait in self.waits:
            if wait.run_id == run_id and wait.step_id == step_id:
                return wait
        return None

    def matching_waits(self, event: AcceptedEvent) -> list[Wait]:
        """Unsettled waits it settles: same name, subset correlation, registered before it."""
        return [
            wait
            for wait in self.waits
            if not wait.settled
            and wait.event == event.name
            and wait.position < event.position
            and correlation_matches(wait.correlation, event.metadata)
        ]
