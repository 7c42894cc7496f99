"""The effect trace of §12.4: what the workflow did, for the bench to check (`conform.trace`).

The host, not the SDK, records it: every start of a step callback or compensator the SDK calls,
and every error that program code caught. The bench cannot see these on the wire.
"""

from __future__ import annotations

from typing import Any

from ryusen_sdk import StepContext
from ryusen_sdk.errors import error_from_exception
from ryusen_sdk.workflow import Suspension


class Trace:
    """The ordered events since the last `conform.reset` or `conform.trace`."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def started(self, step: StepContext, phase: str) -> None:
        """A callback (`forward`) or compensator (`compensation`) began, with what it was given."""
        self.events.append(
            {
                "event": "started",
                "step_id": step.step_id,
                "phase": phase,
                "operation_id": step.operation_id,
                "attempt": step.attempt,
            }
        )

    def caught(self, by: str, exc: BaseException) -> None:
        """Program code (`catch` or `catch_all`) caught `exc`: the SDK's suspension or an error."""
        if isinstance(exc, Suspension):
            self.events.append({"event": "caught", "by": by, "what": "suspension"})
            return
        category = error_from_exception(exc).category
        self.events.append({"event": "caught", "by": by, "what": "error", "category": category})

    def drain(self) -> list[dict[str, Any]]:
        """The events so far; the trace starts empty again."""
        events, self.events = self.events, []
        return events

    def clear(self) -> None:
        self.events = []
