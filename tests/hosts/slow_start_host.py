#!/usr/bin/env python3
"""A host that compiles on first start: `slow_start_host.py SECONDS` sleeps, then serves as the
reference host does (`run --start-timeout`)."""

import sys
import time

from _base import serve

time.sleep(float(sys.argv[1]))
sys.exit(serve(lambda host, kind, frame_id: False))
