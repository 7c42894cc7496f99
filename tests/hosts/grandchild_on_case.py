#!/usr/bin/env python3
"""Hostile host: `grandchild_on_case.py CASE` starts a grandchild on CASE, then exits.

The grandchild inherits stdout and stderr (so the bench never sees end of file), ignores
SIGTERM and sleeps; only a SIGKILL to the process group ends it.
"""

import os
import subprocess
import sys

from _base import is_case, say, serve

SLEEPER = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)"


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        child = subprocess.Popen([sys.executable, "-c", SLEEPER])
        say(f"grandchild {child.pid} holds stdout; exiting on {frame_id}")
        os._exit(5)
    return False


sys.exit(serve(hook))
