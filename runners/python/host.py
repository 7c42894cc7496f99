"""Conformance host for the Ryusen Python SDK (docs/protocol.md §12).

Started by the bench as `runners/python/conform`; speaks length-prefixed envelopes on
stdin/stdout and logs to stderr only.
"""

from __future__ import annotations

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conform_host.host import main  # noqa: E402


def _run_with_deep_stack() -> int:
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


if __name__ == "__main__":
    sys.exit(_run_with_deep_stack())
