#!/usr/bin/env python3
"""Hostile host: `daemon_on_case.py CASE PIDFILE` starts, on CASE's invoke, a double-forked
`setsid env -i` daemon (no mark in its environment, no parent in the host's tree, its own
session) that writes its pid to PIDFILE and sleeps; then the host answers normally.

Why (issue 19 item 12): such a daemon escaped containment, the run passed and it stayed.
"""

import os
import sys

from _base import is_case, serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        pidfile = sys.argv[2]
        moved = f"/bin/mv {pidfile}.tmp {pidfile}"
        script = f"echo $$ > {pidfile}.tmp && {moved} && exec /bin/sleep 600"
        if os.fork() == 0:  # the first fork exits at once: the daemon is orphaned
            if os.fork() == 0:
                os.execvp("setsid", ["setsid", "env", "-i", "/bin/sh", "-c", script])
            os._exit(0)
        os.wait()
    return False


sys.exit(serve(hook))
