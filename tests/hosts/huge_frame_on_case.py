#!/usr/bin/env python3
"""Hostile host: `huge_frame_on_case.py CASE` announces a 4 GiB frame for CASE, then stalls."""

import struct
import sys

from _base import hang, is_case, say, serve, write_raw


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"announcing 4 GiB for {frame_id}")
        write_raw(struct.pack(">I", 0xFFFFFFFF) + b"{" * 1024)
        hang()
    return False


sys.exit(serve(hook))
