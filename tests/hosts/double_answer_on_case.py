#!/usr/bin/env python3
"""Hostile host: `double_answer_on_case.py CASE DELAY` answers CASE's invoke twice.

The second copy follows after DELAY seconds: 0 writes both at once; a positive delay lets the
bench move on to the next case first, so the stale frame meets the next case's exchange.
"""

import sys
import threading
import time

from _base import is_case, say, serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    if kind == "invoke" and is_case(frame_id, sys.argv[1]):
        original = host.send  # type: ignore[attr-defined]
        delay = float(sys.argv[2])

        def send(kind: str, answer_id: str, body: dict) -> None:
            original(kind, answer_id, body)
            host.send = original  # type: ignore[attr-defined]
            say(f"answering {answer_id} twice")
            if delay <= 0:
                original(kind, answer_id, body)
            else:
                threading.Timer(delay, original, (kind, answer_id, body)).start()
                time.sleep(0)

        host.send = send  # type: ignore[attr-defined]
    return False


sys.exit(serve(hook))
