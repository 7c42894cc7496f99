#!/usr/bin/env python3
"""Hostile host: `banner_host.py` prints a banner on stdout (where frames go) before serving."""

import sys

from _base import serve, write_raw

write_raw(b"Mock SDK v1.2 starting up\n")
sys.exit(serve(lambda host, kind, frame_id: False))
