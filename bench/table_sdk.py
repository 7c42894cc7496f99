#!/usr/bin/env python3
"""A trivial conformance host for the benchmark: it answers from a fixed table, doing no work.

Registration and `conform.reset` as §12 asks; an `invoke` is answered `completed` with the
invoke's own input (an echo function), so the bench measures itself, not an SDK.
"""

import json
import struct
import sys

IN = sys.stdin.buffer
OUT = sys.stdout.buffer
HEADER = struct.Struct(">I")
CAPABILITIES = ["compensation", "timers"]
REGISTER = {
    "scope": {"workspace_id": "ws-conform", "application_id": "app-conform"},
    "release": {"kind": "versioned", "id": "rel-conform-1"},
    "instance_id": "conform-instance-1",
    "manifest_hash": "sha256:" + "0" * 64,
    "functions": ["conform.echo", "conform.program", "conform.saga", "conform.unportable"],
    "contract": {
        "protocol_major": 1,
        "value_codec": "ryusen.tagged/1",
        "capabilities": CAPABILITIES,
    },
    "versions": ["1.0"],
    "capabilities": CAPABILITIES,
    "capacity": {"max_concurrent": 1},
    "sdk": {"name": "bench-table", "version": "0", "language": "python", "runtime": "bench"},
}
OUTCOME = {"status": "registered", "version": "1.0", "capabilities": CAPABILITIES}


def answer(kind, ident, body):
    payload = json.dumps(
        {"version": "1.0", "kind": kind, "id": ident, "body": body}, separators=(",", ":")
    ).encode()
    OUT.write(HEADER.pack(len(payload)) + payload)
    OUT.flush()


def main():
    while True:
        header = IN.read(4)
        if len(header) < 4:
            return 0
        envelope = json.loads(IN.read(HEADER.unpack(header)[0]))
        kind, ident = envelope["kind"], envelope["id"]
        if kind == "conform.reset":
            answer("conform.ack", ident, {})
        elif kind == "invoke":
            answer("completed", ident, {"value": envelope["body"]["input"]})
        elif kind == "conform.register":
            answer("register", ident, REGISTER)
        elif kind == "register_ack":
            answer("conform.registration_outcome", ident, OUTCOME)
        elif kind == "conform.shutdown":
            return 0


if __name__ == "__main__":
    sys.exit(main())
