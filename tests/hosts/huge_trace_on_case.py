#!/usr/bin/env python3
"""Hostile host: `huge_trace_on_case.py CASE N [caught|started]` adds N events to its
`conform.trace` answers in CASE: `caught` errors (legal in every invariant: the case still
passes) or starts of a step no pass may run (each one an invariant finding).

Why (issue 19 item 11): a 150,000-event trace cost one case 709 MB and a 104 MB report; what
a case keeps (events, findings) must be bounded whatever the host sends, with no verdict changed.
"""

import sys

from _base import serve, trace_answer_in_case

CASE, COUNT = sys.argv[1], int(sys.argv[2])
KIND = sys.argv[3] if len(sys.argv) > 3 else "caught"
EVENT = (
    {"event": "caught", "by": "catch", "what": "error", "category": "app.failed"}
    if KIND == "caught"
    else {"event": "started", "step_id": "never-declared", "phase": "forward",
          "operation_id": "op-x", "attempt": 1}
)  # fmt: skip


def answer(host: object, frame_id: str) -> None:
    events = host.trace.drain() + [dict(EVENT) for _ in range(COUNT)]  # type: ignore[attr-defined]
    host.send("conform.trace", frame_id, {"events": events})  # type: ignore[attr-defined]


sys.exit(serve(trace_answer_in_case(CASE, answer)))
