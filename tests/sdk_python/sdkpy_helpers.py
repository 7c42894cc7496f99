"""Small builders shared by the Python SDK tests."""

from __future__ import annotations

from typing import Any

from ryusen_sdk import Registry, execute
from ryusen_sdk.answers import Answer, Target
from ryusen_sdk.invocation import InvokeRequest
from ryusen_sdk.workflow import HistoryEntry


def done(value: Any) -> HistoryEntry:
    return HistoryEntry("completed", value=value)


def failed(category: str, message: str = "boom", retryable: bool = False) -> HistoryEntry:
    record = {"category": category, "message": message, "retryable": retryable, "details": {}}
    return HistoryEntry("failed", error=record)


def target(step_id: str, phase: str = "forward", attempt: int = 2) -> Target:
    return Target("run-1", step_id, phase, attempt, "op-7", "11")


def run(
    registry: Registry,
    function_id: str,
    input: Any = None,
    history: dict[str, HistoryEntry] | None = None,
    mode: str = "discover",
    target: Target | None = None,
    admission_open: bool = True,
) -> Answer:
    request = InvokeRequest("req-1", "run-1", function_id, mode, input, history or {}, target)
    return execute(registry, request, admission_open)
