#!/usr/bin/env python3
"""A conformance host that answers every `invoke` with a legal 15.9 MiB frame (`completed`
whose value is a 15.9 MiB string): for bench_memory.py. Everything else as table_sdk.py."""

from __future__ import annotations

import json
import sys

from table_sdk import serve, slow_answer

VALUE_BYTES = int(15.9 * 1024 * 1024)


def main() -> int:
    filler = "x" * VALUE_BYTES

    def answer_for(payload: bytes) -> bytes | None:
        envelope = json.loads(payload)
        if envelope["kind"] != "invoke":
            return slow_answer(payload)
        return json.dumps(
            {"version": "1.0", "kind": "completed", "id": envelope["id"],
             "body": {"value": {"t": "str", "v": filler}}},
            separators=(",", ":"),
        ).encode()  # fmt: skip

    return serve(answer_for)


if __name__ == "__main__":
    sys.exit(main())
