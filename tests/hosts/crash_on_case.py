#!/usr/bin/env python3
"""Hostile host: `crash_on_case.py CASE` dies (status 9) on CASE's invoke, every time."""

import os
import sys

from _base import is_case, say, serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"crashing on {frame_id}")
        os._exit(9)
    return False


sys.exit(serve(hook))
