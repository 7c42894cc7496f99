#!/usr/bin/env python3
"""Hostile host: `escapes_on_case.py CASE` writes terminal escape sequences and CI annotation
lines to stderr on CASE's invoke, then dies (status 9)."""

import os
import sys

from _base import is_case, serve

NASTY = (
    "\x1b[2J\x1b[31mscreen cleared\x1b[0m\n"
    "::error file=README.md,line=1::injected annotation\n"
    "##vso[task.complete result=Succeeded;]injected\n"
    "\x07bell and \x1b]0;title\x07 done\n"
)


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        sys.stderr.write(NASTY)
        sys.stderr.flush()
        os._exit(9)
    return False


sys.exit(serve(hook))
