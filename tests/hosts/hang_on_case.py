#!/usr/bin/env python3
"""Hostile host: `hang_on_case.py CASE` never answers CASE's invoke."""

import sys

from _base import hang, is_case, say, serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"hanging on {frame_id}")
        hang()
    return False


sys.exit(serve(hook))
