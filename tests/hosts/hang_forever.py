#!/usr/bin/env python3
"""Hostile host: `hang_forever.py PIDFILE` writes its pid to PIDFILE, then reads nothing and
answers nothing, ignoring SIGTERM.

Why (issue 19 item 12): a hanging host outlived a SIGKILLed bench; started with
PR_SET_PDEATHSIG it dies with the bench.
"""

import os
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as out:
    out.write(str(os.getpid()))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(3600)
