"""Entry point of the conformance host: `python3 host.py` and the `ryusen-python-conform` script."""

from __future__ import annotations

import os
import sys
import threading

from conform_host.host import serve_stdio
from conform_host.http_serve import main as serve_http


def main() -> int:
    """Serve framed on stdin/stdout, or HTTP with `--http` (or RYUSEN_CONFORM_TRANSPORT=http).

    The choice lives here, above both transports: `http_serve` builds on `host`, so `host`
    never imports `http_serve`."""
    if "--http" in sys.argv[1:] or os.environ.get("RYUSEN_CONFORM_TRANSPORT") == "http":
        return serve_http()
    return serve_stdio()


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
