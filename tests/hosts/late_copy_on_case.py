#!/usr/bin/env python3
"""Hostile host: `late_copy_on_case.py A B WHEN` sends a copy of case A's answer during case B.

The copy is deterministic (unlike a timer): WHEN is `reset` (before acking the first reset
after A, i.e. the next case's), `invoke` (before answering B's invoke), or `after` (right
after answering B's invoke). A itself is answered once, correctly. Every copy is logged.
"""

from __future__ import annotations

import sys

from _base import is_case, say, serve

first, during, when = sys.argv[1], sys.argv[2], sys.argv[3]
kept: list[tuple[str, str, dict]] = []  # A's answer, once sent


def keep_answer(host: object) -> None:
    """Record A's first answer as it is sent."""
    original = host.send  # type: ignore[attr-defined]

    def send(kind: str, answer_id: str, body: dict) -> None:
        original(kind, answer_id, body)
        if not kept and is_case(answer_id, first):
            kept.append((kind, answer_id, body))
            host.send = original  # type: ignore[attr-defined]

    host.send = send  # type: ignore[attr-defined]


def send_copy(host: object) -> None:
    if kept:
        kind, answer_id, body = kept.pop()
        say(f"sending a late copy of {answer_id}")
        host.send(kind, answer_id, body)  # type: ignore[attr-defined]


def copy_after_answer(host: object) -> None:
    """Send the copy right after the next answer (B's)."""
    original = host.send  # type: ignore[attr-defined]

    def send(kind: str, answer_id: str, body: dict) -> None:
        original(kind, answer_id, body)
        host.send = original  # type: ignore[attr-defined]
        send_copy(host)

    host.send = send  # type: ignore[attr-defined]


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, first):
        keep_answer(host)
    elif when == "reset" and kind == "conform.reset":
        send_copy(host)
    elif kind == "invoke" and is_case(frame_id, during):
        if when == "invoke":
            send_copy(host)
        elif when == "after":
            copy_after_answer(host)
    return False


sys.exit(serve(hook))
