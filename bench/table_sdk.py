#!/usr/bin/env python3
"""A trivial conformance host for the benchmark: it answers from a table, doing no SDK work.

`table_sdk.py [TABLE]` loads TABLE (written by `write_table`: request payload bytes -> answer
payload bytes, precomputed by the bench) and answers a known request by a dictionary look-up, so
its cost approaches the echo host's and the bench measures itself, not an SDK. `conform.reset`
is answered by splicing its id into the ack, and `conform.trace` (an echo runs no callback) by
splicing its id into an answer with no events. Anything else (registration, shutdown, a request
missing from the table) takes the slow path: JSON decoding, as a real host would do. An unknown
`invoke` is answered `completed` with its own input (an echo function).
"""

import json
import struct
import sys

IN = sys.stdin.buffer
OUT = sys.stdout.buffer
HEADER = struct.Struct(">I")
#: The versions the bench may write its control frames in (it writes its own, 1.1 since the
#: protocol bump): a head that misses would send every reset and trace down the slow path.
VERSIONS = (b"1.0", b"1.1")
RESET_HEADS = [b'{"version":"%s","kind":"conform.reset","id":"' % v for v in VERSIONS]
RESET_TAIL = b'","body":{}}'
ACK_HEADS = [b'{"version":"%s","kind":"conform.ack","id":"' % v for v in VERSIONS]
ACK_TAIL = b'","body":{}}'
TRACE_HEADS = [b'{"version":"%s","kind":"conform.trace","id":"' % v for v in VERSIONS]
TRACE_TAIL = b'","body":{}}'
NO_EVENTS_TAIL = b'","body":{"events":[]}}'
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


def write_table(path, pairs):
    """Store (request payload, answer payload) pairs as length-prefixed byte strings."""
    with open(path, "wb") as out:
        for request, answer in pairs:
            out.write(HEADER.pack(len(request)) + request + HEADER.pack(len(answer)) + answer)


def read_table(path):
    data = open(path, "rb").read()
    table, offset = {}, 0
    while offset < len(data):
        parts = []
        for _ in range(2):
            (size,) = HEADER.unpack_from(data, offset)
            parts.append(data[offset + 4 : offset + 4 + size])
            offset += 4 + size
        table[parts[0]] = parts[1]
    return table


def encode(kind, ident, body):
    envelope = {"version": "1.0", "kind": kind, "id": ident, "body": body}
    return json.dumps(envelope, separators=(",", ":")).encode()


def slow_answer(payload):
    """Decode the request and build the answer; None for `conform.shutdown` (exit)."""
    envelope = json.loads(payload)
    kind, ident = envelope["kind"], envelope["id"]
    if kind == "conform.reset":
        return encode("conform.ack", ident, {})
    if kind == "invoke":
        return encode("completed", ident, {"value": envelope["body"]["input"]})
    if kind == "conform.trace":  # §12.4: an echo runs no callback
        return encode("conform.trace", ident, {"events": []})
    if kind == "conform.register":
        return encode("register", ident, REGISTER)
    if kind == "register_ack":
        return encode("conform.registration_outcome", ident, OUTCOME)
    if kind == "conform.shutdown":
        return None
    return b""  # nothing to say


def serve(answer_for):
    """Serve frames on stdin/stdout: `answer_for(payload)` gives the answer's bytes, `b""` for
    none, None to exit. The one frame loop of the bench's test hosts (huge_host.py too)."""
    while True:
        header = IN.read(4)
        if len(header) < 4:
            return 0
        answer = answer_for(IN.read(HEADER.unpack(header)[0]))
        if answer is None:
            return 0
        if answer:
            OUT.write(HEADER.pack(len(answer)) + answer)
            OUT.flush()


def main():
    table = read_table(sys.argv[1]) if len(sys.argv) > 1 else {}
    lookup, head, tail = table.get, len(RESET_HEADS[0]), len(RESET_TAIL)
    spliced = list(zip(RESET_HEADS, ACK_HEADS, TRACE_HEADS, strict=True))

    def answer_for(payload):
        answer = lookup(payload)
        if answer is not None:
            return answer
        for reset, ack, trace in spliced:  # the answer in the request's version
            if payload.startswith(reset) and payload.endswith(RESET_TAIL):
                return ack + payload[head:-tail] + ACK_TAIL
            if payload.startswith(trace) and payload.endswith(TRACE_TAIL):
                return trace + payload[len(trace) : -len(TRACE_TAIL)] + NO_EVENTS_TAIL
        return slow_answer(payload)

    return serve(answer_for)


if __name__ == "__main__":
    sys.exit(main())
