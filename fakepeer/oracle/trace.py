"""Effect-trace events (host-contract §12.4) and the rule an SDK's trace is held to."""

from __future__ import annotations

import json


def started(step_id: str, phase: str, operation_id: str, attempt: int) -> dict:
    """A callback (`forward`) or compensator (`compensation`) started."""
    return {
        "event": "started",
        "step_id": step_id,
        "phase": phase,
        "operation_id": operation_id,
        "attempt": attempt,
    }


def caught(by: str, category: str) -> dict:
    """Program code caught an error record (`by`: `catch` or `catch_all`)."""
    return {"event": "caught", "by": by, "what": "error", "category": category}


def _is_suspension(event: object) -> bool:
    return isinstance(event, dict) and event.get("what") == "suspension"


def trace_difference(expected: tuple[dict, ...] | list[dict], actual: list) -> str | None:
    """None when `actual` is a trace a correct SDK may leave, else the first difference.

    A caught suspension is dropped on both sides (whether a host sees one differs between
    correct SDKs, §12.4), but only `catch_all` may catch one (§11.2 item 6). The rest must
    start with the expected events exactly; what follows may only be `caught` events (recorded
    after the answer was fixed, by a workflow that went on), never a `started` one.
    """
    for index, event in enumerate(actual):
        if _is_suspension(event) and event.get("by") != "catch_all":
            return f"trace event {index}: {_show(event)}: only catch_all may catch a suspension"
    wanted = [event for event in expected if not _is_suspension(event)]
    got = [event for event in actual if not _is_suspension(event)]
    for index, event in enumerate(wanted):
        if index >= len(got):
            return f"trace event {index}: expected {_show(event)}, the trace ended"
        if got[index] != event:
            return f"trace event {index}: expected {_show(event)}, got {_show(got[index])}"
    for index, event in enumerate(got[len(wanted) :], start=len(wanted)):
        if not (isinstance(event, dict) and event.get("event") == "caught"):
            return f"trace event {index}: unexpected {_show(event)} after the answer was fixed"
    return None


def _show(event: object) -> str:
    return json.dumps(event, sort_keys=True)
