#!/usr/bin/env python3
"""Hostile host: `crash_after_cases.py N MARKER` serves N cases, then dies mid-case, once.

The (N+1)-th case's invoke kills the process; MARKER (a file path) records that it happened
so the respawned process behaves.
"""

import os
import sys
from pathlib import Path

from _base import say, serve

limit, marker = int(sys.argv[1]), Path(sys.argv[2])
resets = 0


def hook(host: object, kind: str, frame_id: str) -> bool:
    global resets
    resets += kind == "conform.reset"
    if kind == "invoke" and resets > limit and not marker.exists():
        marker.write_text(frame_id)
        say(f"crashing mid-case after {limit} cases, on {frame_id}")
        os._exit(11)
    return False


sys.exit(serve(hook))
