#!/usr/bin/env python3
"""Hostile host: `stderr_flood.py CASE MIB answer|crash` writes MIB MiB to stderr on CASE.

Then it answers normally (the case must pass) or dies (the stderr tail must end with the
last line, and stay bounded).
"""

import os
import sys

from _base import is_case, say, serve

LINE = b"hostile flood " + b"x" * 1009 + b"\n"  # 1 KiB per line


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        for _ in range(int(sys.argv[2]) * 1024):
            os.write(2, LINE)
        say(f"flood done for {frame_id}")
        if sys.argv[3] == "crash":
            os._exit(13)
    return False


sys.exit(serve(hook))
