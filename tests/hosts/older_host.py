#!/usr/bin/env python3
"""An older host: `older_host.py [KIND ...]` lacks these control messages (default
`conform.trace`), answering each as an unknown kind, as a host built against an older host
contract does (docs/host-contract.md; `protocol.unknown_variant` at `/kind`)."""

import sys

from _base import serve

MISSING = set(sys.argv[1:]) or {"conform.trace"}


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind not in MISSING:
        return False
    error = {
        "category": "protocol.unknown_variant",
        "message": f"unknown kind {kind!r}",
        "retryable": False,
        "details": {"pointer": "/kind"},
    }
    host.send("protocol_error", frame_id, {"error": error})  # type: ignore[attr-defined]
    return True


sys.exit(serve(hook))
