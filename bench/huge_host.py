#!/usr/bin/env python3
"""A conformance host that answers every `invoke` with a legal 15.9 MiB frame (`completed`
whose value is a 15.9 MiB string): for bench_memory.py. Everything else as table_sdk.py."""

from __future__ import annotations

import json
import struct
import sys

from table_sdk import slow_answer

HEADER = struct.Struct(">I")
VALUE_BYTES = int(15.9 * 1024 * 1024)
IN, OUT = sys.stdin.buffer, sys.stdout.buffer


def main() -> int:
    filler = "x" * VALUE_BYTES
    while True:
        header = IN.read(4)
        if len(header) < 4:
            return 0
        payload = IN.read(HEADER.unpack(header)[0])
        envelope = json.loads(payload)
        if envelope["kind"] == "invoke":
            answer = json.dumps(
                {"version": "1.0", "kind": "completed", "id": envelope["id"],
                 "body": {"value": {"t": "str", "v": filler}}},
                separators=(",", ":"),
            ).encode()  # fmt: skip
        else:
            answer = slow_answer(payload)
            if answer is None:
                return 0
            if not answer:
                continue
        OUT.write(HEADER.pack(len(answer)) + answer)
        OUT.flush()


if __name__ == "__main__":
    sys.exit(main())
