#!/usr/bin/env python3
"""Hostile host: exits with status 3 before reading anything (never registers)."""

import sys

sys.stderr.write("hostile: cannot load my SDK, giving up\n")
sys.exit(3)
