"""Signals that end a run: Ctrl-C, SIGTERM, SIGHUP and SIGQUIT, each handled the same way.

The first one raises KeyboardInterrupt in the main thread: the runner stops, kills every SDK
process, marks unfinished cases as not run, and the reports that can be written are written.
Later ones are only noted: cleanup has deadlines everywhere, so it ends soon by itself, and a
second Ctrl-C must not abandon it half-way (leaving hosts running).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

HANDLED = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    if hasattr(signal, name)
)
_received: list[int] = []
_announced: list[bool] = []
#: Set (a plain assignment, `interrupts.decided = True`: no call, so no signal handler can
#: run before it takes effect) once the command has ended and its exit status is being settled:
#: from then on a signal is only noted in `_late`, never raised, so it cannot tear through the
#: closing of the hosts or the last output; `settle` then ends the process with 128 + its number.
decided = False
_late: list[int] = []


def install(earlier: Sequence[int] = ()) -> None:
    """Route every signal that ends a run through `_on_signal` (main thread only). Installed
    before the command line's imports and again by it: a signal received in between (or
    `earlier`, by fakepeer.__main__) stays received (its KeyboardInterrupt may have been
    swallowed, see `pending`)."""
    global decided
    decided = False
    _late.clear()
    if signal.getsignal(HANDLED[0]) is _on_signal:
        return
    _received[:] = earlier
    _announced.clear()
    for signum in HANDLED:
        signal.signal(signum, _on_signal)
    if sys.unraisablehook is not _unraisable:
        _HOOKS.append(sys.unraisablehook)
        sys.unraisablehook = _unraisable


_HOOKS: list = []


def _unraisable(unraisable: object) -> None:
    """An interrupt Python had to swallow is not printed as a traceback: `pending` raises it
    again where it can be handled. Anything else is shown as before."""
    if getattr(unraisable, "exc_type", None) is KeyboardInterrupt and _received:
        return
    _HOOKS[0](unraisable)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if decided:  # the command has ended: noted for `settle`, never raised
        _late.append(signum)
        return
    _received.append(signum)
    if len(_received) == 1:
        raise KeyboardInterrupt
    name = signal.Signals(signum).name
    sys.stderr.write(f"ryusen-conform: {name} again: still stopping the SDK processes\n")


def received() -> bool:
    """Whether a signal has interrupted this process."""
    return bool(_received)


def pending() -> None:
    """Raise KeyboardInterrupt again when a signal was received: the one its handler raised can
    be swallowed where Python ignores exceptions (a weak reference's callback in the import
    system, a `__del__`), and the command must stop all the same. Main thread only."""
    if _received and threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt


def caused_by_signal(error: BaseException) -> bool:
    """Whether a received signal's KeyboardInterrupt is behind `error`: Python wraps one raised
    inside some hooks (a RuntimeError from a dataclass field's `__set_name__` during an import),
    and that is the same interruption, never a traceback."""
    seen: BaseException | None = error
    while _received and seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def announce() -> bool:
    """True the first time it is asked after a signal: the interruption is said once only."""
    if not _received or _announced:
        return False
    _announced.append(True)
    return True


def first_signal() -> str:
    """`SIGINT` (or the like) for the signal that interrupted the run; `Ctrl-C` if none seen."""
    return signal.Signals(_received[0]).name if _received else "SIGINT"


def settle() -> None:
    """Everything is written and the exit status decided: a signal from now on ends the process
    at once with 128 + its number, never a traceback from the interpreter's shutdown."""
    for signum in HANDLED:
        signal.signal(signum, _exit_at_once)
    if _late:  # one came as the command was ending: it ends the process now, as it would have
        _exit_at_once(_late[0], None)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(128 + signum)
