"""Signals that end a run: Ctrl-C, SIGTERM, SIGHUP and SIGQUIT, each handled the same way.

The first one raises KeyboardInterrupt in the main thread: the runner stops, kills every SDK
process, marks unfinished cases as not run, and the reports that can be written are written.
Later ones are only noted: cleanup has deadlines everywhere, so it ends soon by itself, and a
second Ctrl-C must not abandon it half-way (leaving hosts running).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

HANDLED = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    if hasattr(signal, name)
)
_received: list[int] = []


def install() -> None:
    """Route every signal that ends a run through `_on_signal` (main thread only)."""
    _received.clear()
    for signum in HANDLED:
        signal.signal(signum, _on_signal)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if len(_received) == 1:
        raise KeyboardInterrupt
    name = signal.Signals(signum).name
    sys.stderr.write(f"ryusen-conform: {name} again: still stopping the SDK processes\n")


def first_signal() -> str:
    """`SIGINT` (or the like) for the signal that interrupted the run; `Ctrl-C` if none seen."""
    return signal.Signals(_received[0]).name if _received else "SIGINT"
