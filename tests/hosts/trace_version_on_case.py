#!/usr/bin/env python3
"""Hostile host: `trace_version_on_case.py CASE VERSION` answers `conform.trace` in CASE with
the envelope `version` VERSION (`none`: no `version` member at all), its events unchanged.

Why (issue 19 item 13): a trace answer with version "9.0" or none passed the case.
"""

import json
import sys

from _base import serve, trace_answer_in_case, write_frame_raw

CASE, VERSION = sys.argv[1], sys.argv[2]


def answer(host: object, frame_id: str) -> None:
    envelope = {"version": VERSION, "kind": "conform.trace", "id": frame_id}
    if VERSION == "none":
        del envelope["version"]
    envelope["body"] = {"events": host.trace.drain()}  # type: ignore[attr-defined]
    write_frame_raw(json.dumps(envelope).encode())


sys.exit(serve(trace_answer_in_case(CASE, answer)))
