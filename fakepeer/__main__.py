"""`python -m fakepeer` is `ryusen-conform`, and `entry` is its console script.

Why here: the signals that end a run are routed first (by the built-in `_signal`, before even
the `signal` module is imported), then the command line is imported (half a second of
imports), so a Ctrl-C at any moment is one line and exit status 130, never a traceback.
"""

from __future__ import annotations

import _signal
import os
import sys

#: The exit status of a run a signal ended (as fakepeer.session's EXIT_INTERRUPTED).
_INTERRUPTED = 130
#: The signals that end a run (fakepeer.interrupts.HANDLED), by number without `signal`.
_NAMES = {
    getattr(_signal, name): name
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    if hasattr(_signal, name)
}
_early: list[int] = []


def _on_early_signal(signum: int, frame: object) -> None:
    _early.append(signum)
    if len(_early) == 1:
        raise KeyboardInterrupt


def _caused_by_interrupt(error: BaseException) -> bool:
    """Whether a signal's KeyboardInterrupt is behind `error`: Python wraps one raised inside
    some hooks (a dataclass field's `__set_name__` wraps it in a RuntimeError)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def entry() -> None:
    """The console script: route the signals, import the command line, run it."""
    try:
        for signum in _NAMES:
            _signal.signal(signum, _on_early_signal)
        from fakepeer import interrupts

        interrupts.install(earlier=_early)
        from fakepeer.cli import main
    except BaseException as error:
        if not _caused_by_interrupt(error):
            raise
        name = _NAMES.get(_early[0], "SIGINT") if _early else "SIGINT"
        sys.stderr.write(f"ryusen-conform: interrupted by {name} while starting; nothing was run\n")
        sys.stderr.flush()
        os._exit(_INTERRUPTED)  # nothing started yet; the interpreter's exit could re-raise SIGINT
    status = main()
    if interrupts.received():
        # the interpreter's own exit could still end an interrupted run by SIGINT (-2), its
        # one line printed: about one in fifty did (tests/hostile/test_early_signals.py)
        from fakepeer.transport.inprocess import end_process

        end_process(status)
    sys.exit(status)


if __name__ == "__main__":
    entry()
