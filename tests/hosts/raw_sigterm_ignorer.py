#!/usr/bin/env python3
"""A host that ignores SIGTERM and never answers: only SIGKILL ends it."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stderr.write("ignoring SIGTERM\n")
sys.stderr.flush()
while True:
    time.sleep(60)
