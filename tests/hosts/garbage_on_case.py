#!/usr/bin/env python3
"""Hostile host: `garbage_on_case.py CASE framed|raw` answers CASE with garbage bytes.

framed: one well-framed payload that is not UTF-8 JSON; raw: unframed bytes (a stray print).
"""

import struct
import sys

from _base import hang, is_case, say, serve, write_raw

GARBAGE = bytes(range(256))


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"writing {sys.argv[2]} garbage for {frame_id}")
        if sys.argv[2] == "framed":
            write_raw(struct.pack(">I", len(GARBAGE)) + GARBAGE)
        else:
            write_raw(b"Traceback (most recent call last): oops\n" + GARBAGE)
        hang()
    return False


sys.exit(serve(hook))
