#!/usr/bin/env python3
"""Hostile host: `wrong_id_on_case.py CASE` answers CASE's invoke with another id."""

import sys

from _base import is_case, say, serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        say(f"answering {frame_id} as 'someone-else#1'")
        original = host.send  # type: ignore[attr-defined]

        def send(kind: str, _frame_id: str, body: dict) -> None:
            original(kind, "someone-else#1", body)

        host.send = send  # type: ignore[attr-defined]
    return False


sys.exit(serve(hook))
