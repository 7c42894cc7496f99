#!/usr/bin/env python3
"""Hostile host: `sigterm_ignorer.py CASE` ignores SIGTERM and hangs on CASE's invoke."""

import signal
import sys

from _base import hang, is_case, say, serve

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"ignoring SIGTERM and hanging on {frame_id}")
        hang()
    return False


sys.exit(serve(hook))
