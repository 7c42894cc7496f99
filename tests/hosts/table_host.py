#!/usr/bin/env python3
"""A tiny table-driven conformance host for the bench's own tests (no SDK behind it).

It registers like §12.1 asks, acks `conform.reset`, and answers each `invoke` from a table keyed
by the invoke's `run_id` (the table is the JSON file named by TABLE_HOST_TABLE, or built in).
Some run ids misbehave on purpose: crash, hang, garbage, wrong-id, huge-frame, zero-frame,
stderr-flood, extra-frame, truncated. TABLE_HOST_CAPABILITIES (comma separated) sets the offer.
"""

import json
import os
import struct
import sys
import time

IN = sys.stdin.buffer
OUT = sys.stdout.buffer
HASH = "sha256:" + "0" * 64


def read_exact(n):
    data = b""
    while len(data) < n:
        chunk = IN.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame():
    header = read_exact(4)
    if header is None:
        return None
    (length,) = struct.unpack(">I", header)
    return read_exact(length)


def write_payload(payload):
    OUT.write(struct.pack(">I", len(payload)) + payload)
    OUT.flush()


def send(kind, ident, body):
    envelope = {"version": "1.0", "kind": kind, "id": ident, "body": body}
    write_payload(json.dumps(envelope, separators=(",", ":")).encode())


def capabilities():
    text = os.environ.get("TABLE_HOST_CAPABILITIES", "compensation,timers")
    return sorted(c for c in text.split(",") if c)


def register_body():
    caps = capabilities()
    return {
        "scope": {"workspace_id": "ws-conform", "application_id": "app-conform"},
        "release": {"kind": "versioned", "id": "rel-conform-1"},
        "instance_id": "conform-instance-1",
        "manifest_hash": HASH,
        "functions": ["conform.echo", "conform.program", "conform.saga", "conform.unportable"],
        "contract": {"protocol_major": 1, "value_codec": "ryusen.tagged/1", "capabilities": caps},
        "versions": ["1.0"],
        "capabilities": caps,
        "capacity": {"max_concurrent": 1},
        "sdk": {"name": "table-host", "version": "0", "language": "python", "runtime": "test"},
    }


# run_id -> the answer; a run id not in the table is answered `completed` with the invoke's input.
DEFAULT_TABLE = {
    "null": {"kind": "completed", "body": {"value": {"t": "null"}}},
    "wrong-value": {
        "kind": "completed",
        "body": {"value": {"t": "str", "v": "not what you asked"}},
    },
}


def load_table():
    path = os.environ.get("TABLE_HOST_TABLE")
    if not path:
        return DEFAULT_TABLE
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def say(text):
    sys.stderr.write(f"table host: {text}\n")
    sys.stderr.flush()


def misbehave(run_id, ident):
    """Return True when the run id named a misbehaviour that already answered (or never will).

    Those that leave the host running first say on stderr what they are about to do.
    """
    if run_id in ("garbage", "wrong-id", "huge-frame"):
        say(f"about to answer {ident} with {run_id}")
    if run_id == "crash":
        sys.stderr.write("table host: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if run_id == "hang":
        sys.stderr.write("table host: hanging on purpose\n")
        sys.stderr.flush()
        while True:
            time.sleep(60)
    if run_id == "garbage":
        write_payload(b"this is not json")
        return True
    if run_id == "wrong-id":
        send("completed", "someone-else#1", {"value": {"t": "null"}})
        return True
    if run_id == "huge-frame":
        OUT.write(struct.pack(">I", 0xFFFFFFF0))
        OUT.flush()
        return True
    if run_id == "zero-frame":
        OUT.write(struct.pack(">I", 0))
        OUT.flush()
        return True
    if run_id == "truncated":
        OUT.write(struct.pack(">I", 100) + b'{"version"')
        OUT.flush()
        os._exit(0)
    if run_id == "stderr-flood":
        chunk = "flood " * 1000 + "\n"
        for _ in range(300):  # about 1.8 MB, far beyond any pipe buffer
            sys.stderr.write(chunk)
        sys.stderr.write("flood done\n")
        sys.stderr.flush()
        send("completed", ident, {"value": {"t": "null"}})
        return True
    if run_id == "extra-frame":
        send("completed", ident, {"value": {"t": "null"}})
        send("completed", ident, {"value": {"t": "null"}})
        return True
    return False


def main():
    table = load_table()
    while True:
        payload = read_frame()
        if payload is None:
            return 0
        try:
            envelope = json.loads(payload)
        except ValueError:
            send(
                "protocol_error",
                "-",
                {
                    "error": {
                        "category": "protocol.malformed",
                        "message": "not JSON",
                        "retryable": False,
                        "details": {"pointer": ""},
                    }
                },
            )
            continue
        kind, ident, body = envelope.get("kind"), envelope.get("id"), envelope.get("body", {})
        if kind == "conform.register":
            send("register", ident, register_body())
        elif kind == "register_ack":
            send(
                "conform.registration_outcome",
                ident,
                {"status": "registered", "version": "1.0", "capabilities": capabilities()},
            )
        elif kind == "conform.reset":
            send("conform.ack", ident, {})
        elif kind == "conform.trace":  # §12.4: a table runs no callback
            send("conform.trace", ident, {"events": []})
        elif kind == "conform.shutdown":
            return 0
        elif kind == "invoke":
            run_id = body.get("run_id")
            if misbehave(run_id, ident):
                continue
            answer = table.get(run_id)
            if answer is None:
                send("completed", ident, {"value": body.get("input", {"t": "null"})})
            else:
                send(answer["kind"], ident, answer["body"])
        else:
            send(
                "protocol_error",
                ident if isinstance(ident, str) else "-",
                {
                    "error": {
                        "category": "protocol.unknown_variant",
                        "message": "unknown kind",
                        "retryable": False,
                        "details": {"pointer": "/kind"},
                    }
                },
            )


if __name__ == "__main__":
    sys.exit(main())
