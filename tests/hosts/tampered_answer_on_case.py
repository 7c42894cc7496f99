#!/usr/bin/env python3
"""Hostile host: `tampered_answer_on_case.py CASE MODE` answers CASE's invoke with a frame the
protocol refuses but a lenient JSON parser takes for the right answer.

MODE: `duplicate-key` (`"kind":"failed"` before the real `"kind":"completed"`), `nan` and
`infinity` (an unknown member holding the literal), `overflow` (an unknown member `1e400`),
`deep` (an unknown member nested to a JSON depth of about 980: legal length, past the limit),
`deep-value` (the answer's tagged value nested 490 levels).
"""

import json
import sys

from _base import is_case, say, serve, write_frame_raw


def tampered(real: bytes, mode: str) -> bytes:
    if mode == "duplicate-key":
        return b'{"kind":"failed",' + real[1:]
    if mode in ("nan", "infinity", "overflow"):
        literal = {"nan": b"NaN", "infinity": b"-Infinity", "overflow": b"1e400"}[mode]
        return real[:-1] + b',"extra":' + literal + b"}"
    if mode == "deep":
        return real[:-1] + b',"extra":' + b"[" * 978 + b"]" * 978 + b"}"
    levels = 490
    envelope = json.loads(real)
    head = b'{"version":"1.0","kind":"completed","id":' + json.dumps(envelope["id"]).encode()
    value = b'{"t":"array","v":[' * levels + b'{"t":"null"}' + b"]}" * levels
    return head + b',"body":{"value":' + value + b"}}"


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        original = host.send  # type: ignore[attr-defined]

        def send(kind: str, answer_id: str, body: dict) -> None:
            host.send = original  # type: ignore[attr-defined]
            real = json.dumps(
                {"version": "1.0", "kind": kind, "id": answer_id, "body": body},
                separators=(",", ":"),
            ).encode()
            say(f"answering {answer_id} with a {sys.argv[2]} frame")
            write_frame_raw(tampered(real, sys.argv[2]))

        host.send = send  # type: ignore[attr-defined]
    return False


sys.exit(serve(hook))
