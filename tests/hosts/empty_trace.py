#!/usr/bin/env python3
"""Hostile host: `empty_trace.py` is the reference host whose `conform.trace` always answers no
events (what a host that never records `started` looks like to the bench).

Why (issue 20): the one-pass invariants alone accepted an empty trace, so such a host passed
every targeted case whose fixture states no trace. A targeted answer that reports the target's
outcome must come with the start of the target's callback or compensator.
"""

import sys

from _base import serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind != "conform.trace":
        return False
    host.trace.drain()  # type: ignore[attr-defined]
    host.send("conform.trace", frame_id, {"events": []})  # type: ignore[attr-defined]
    return True


sys.exit(serve(hook))
