"""`python -m fakepeer` is `ryusen-conform`, and `entry` is its console script.

Why here: the signals that end a run are routed before the command line's imports (half a
second of them), so a Ctrl-C at any moment is one line and exit status 130, never a traceback.
"""

from __future__ import annotations

import os
import sys

from fakepeer import interrupts

#: The exit status of a run a signal ended (as fakepeer.session's EXIT_INTERRUPTED).
_INTERRUPTED = 130


def entry() -> None:
    """The console script: route the signals, import the command line, run it."""
    interrupts.install()
    try:
        from fakepeer.cli import main
    except KeyboardInterrupt:
        sys.stderr.write(
            f"ryusen-conform: interrupted by {interrupts.first_signal()} while starting; "
            "nothing was run\n"
        )
        sys.stderr.flush()
        os._exit(
            _INTERRUPTED
        )  # nothing started yet; the interpreter's own exit could re-raise SIGINT
    sys.exit(main())


if __name__ == "__main__":
    entry()
