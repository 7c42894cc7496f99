#!/usr/bin/env python3
"""Hostile host: `double_answer_on_kind.py KIND NTH [ONCE]` answers the NTH frame of KIND twice
(each process counts its own frames; both copies are written at once), e.g. a lifecycle
scenario's last `conform.trace` before it restarts the host. With ONCE (a file path), only the
first process that gets so far does it (it creates the file)."""

import os
import sys

from _base import say, serve

seen = 0


def hook(host: object, kind: str, frame_id: str) -> bool:
    global seen
    if kind != sys.argv[1]:
        return False
    seen += 1
    if seen != int(sys.argv[2]):
        return False
    if len(sys.argv) > 3:
        try:
            os.close(os.open(sys.argv[3], os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
    original = host.send  # type: ignore[attr-defined]

    def send(kind: str, answer_id: str, body: dict) -> None:
        original(kind, answer_id, body)
        original(kind, answer_id, body)
        host.send = original  # type: ignore[attr-defined]
        say(f"answered {answer_id} twice")

    host.send = send  # type: ignore[attr-defined]
    return False


sys.exit(serve(hook))
