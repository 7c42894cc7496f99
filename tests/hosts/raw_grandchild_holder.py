#!/usr/bin/env python3
"""A host that starts a grandchild holding stdout/stderr open (and ignoring SIGTERM), then crashes.

The grandchild's pid is printed on stderr as `grandchild <pid>` so the test can check it died.
"""

import os
import signal
import subprocess
import sys

code = (
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(60)"
)
child = subprocess.Popen([sys.executable, "-c", code])  # inherits our stdout and stderr
sys.stderr.write(f"grandchild {child.pid}\n")
sys.stderr.flush()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.buffer.read(4)  # wait for the bench's first frame, then crash
os._exit(7)
