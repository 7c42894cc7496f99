"""Entry point of the conformance host: `python3 host.py` and the `ryusen-python-conform` script."""

from __future__ import annotations

import sys
import threading

from conform_host.host import main


def run_with_deep_stack() -> int:
    """Serve on a thread with a large stack so deeply nested frames still parse and refuse."""
    sys.setrecursionlimit(60_000)
    threading.stack_size(512 * 1024 * 1024)
    status: list[int] = [1]

    def target() -> None:
        status[0] = main()

    thread = threading.Thread(target=target, name="conform-host")
    thread.start()
    thread.join()
    return status[0]


def script() -> None:
    sys.exit(run_with_deep_stack())
