#!/usr/bin/env python3
"""Hostile host: `setsid_child_on_case.py CASE` starts, on CASE's invoke, a child that leaves
the host's process group and session (`setsid`) and sleeps; then it answers normally."""

import subprocess
import sys
import time

from _base import is_case, say, serve

CHILD = (
    "import os, sys, time; os.setsid(); sys.stdout.write('x'); sys.stdout.flush(); time.sleep(600)"
)


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        child.stdout.read(1)  # it has left the group once it wrote
        say(f"started {child.pid}, which left my process group")
        time.sleep(0)
    return False


sys.exit(serve(hook))
