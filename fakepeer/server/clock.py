"""The virtual clock and the scheduler: due work in time order, time jumps, nothing sleeps.

RFD 2: "The server owns the clock, the scheduling, restart, and cancellation". The clock only
moves forward, to the due time of the next piece of work, so a one-hour timer costs nothing.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

#: Virtual milliseconds since the Unix epoch at which every simulation starts (2026-01-01).
EPOCH_MS = 1_767_225_600_000


class VirtualClock:
    """Milliseconds since the Unix epoch; moves only when the scheduler says so."""

    def __init__(self, start_ms: int = EPOCH_MS) -> None:
        self.start_ms = start_ms
        self.now_ms = start_ms

    @property
    def elapsed_ms(self) -> int:
        """Virtual time since the simulation began."""
        return self.now_ms - self.start_ms

    def advance_to(self, instant_ms: int) -> None:
        """Jump to `instant_ms`; the clock never goes back."""
        if instant_ms > self.now_ms:
            self.now_ms = instant_ms


@dataclass(order=True)
class _Entry:
    due_ms: int
    order: int
    action: Callable[[], None] = field(compare=False)
    label: str = field(compare=False, default="")
    cancelled: bool = field(compare=False, default=False)


class Scheduler:
    """Work due at virtual instants; ties run in the order they were scheduled."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._queue: list[_Entry] = []
        self._order = itertools.count()

    def at(self, due_ms: int, action: Callable[[], None], label: str = "") -> _Entry:
        """Run `action` at `due_ms` (never before now)."""
        entry = _Entry(max(due_ms, self.clock.now_ms), next(self._order), action, label)
        heapq.heappush(self._queue, entry)
        return entry

    def after(self, delay_ms: int, action: Callable[[], None], label: str = "") -> _Entry:
        return self.at(self.clock.now_ms + max(delay_ms, 0), action, label)

    def soon(self, action: Callable[[], None], label: str = "") -> _Entry:
        return self.at(self.clock.now_ms, action, label)

    @staticmethod
    def cancel(entry: _Entry | None) -> None:
        if entry is not None:
            entry.cancelled = True

    def pending(self) -> int:
        return sum(1 for entry in self._queue if not entry.cancelled)

    def run_next(self) -> bool:
        """Advance the clock to the next due work and run it; False when nothing is left."""
        while self._queue:
            entry = heapq.heappop(self._queue)
            if entry.cancelled:
                continue
            self.clock.advance_to(entry.due_ms)
            entry.action()
            return True
        return False
