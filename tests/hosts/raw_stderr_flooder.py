#!/usr/bin/env python3
"""A host that writes a lot to stderr before echoing frames back, so a bench that does not drain
stderr would deadlock on a full pipe."""

import struct
import sys

sys.stderr.write(("flood " * 2000 + "\n") * 400)  # about 4.8 MB
sys.stderr.write("END-OF-FLOOD\n")
sys.stderr.flush()
while True:
    header = sys.stdin.buffer.read(4)
    if len(header) < 4:
        sys.exit(0)
    (length,) = struct.unpack(">I", header)
    payload = sys.stdin.buffer.read(length)
    sys.stdout.buffer.write(header + payload)
    sys.stdout.buffer.flush()
