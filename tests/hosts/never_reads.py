#!/usr/bin/env python3
"""Hostile host: `never_reads.py` never reads its input (so the bench's writes fill the pipe)."""

import time

while True:
    time.sleep(3600)
