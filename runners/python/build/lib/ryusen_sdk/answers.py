"""The SDK's answers to one invocation (§10): a kind plus its body, ready for an envelope."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Answer:
    """One §10 answer: the envelope `kind` and its `body`."""

    kind: str
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """A targeted execution's target (§9.1, §9.3): server-supplied and immutable."""

    run_id: str
    step_id: str
    phase: str
    attempt: int
    operation_id: str
    fencing_generation: str

    def identity(self) -> dict[str, Any]:
        """The three members every targeted answer echoes unchanged (§10.4)."""
        return {
            "operation_id": self.operation_id,
            "attempt": self.attempt,
            "fencing_generation": self.fencing_generation,
        }


def declared(declaration: dict[str, Any]) -> Answer:
    return Answer("declared", {"declaration": declaration})


def completed(value: dict[str, Any]) -> Answer:
    return Answer("completed", {"value": value})


def failed(error: dict[str, Any]) -> Answer:
    return Answer("failed", {"error": error})


def target_not_found(target: Target) -> Answer:
    return Answer(
        "target_not_found",
        {"run_id": target.run_id, "step_id": target.step_id, "phase": target.phase},
    )


def rejected_before_start(
    request_id: str, target: Target, code: str, message: str, retryable: bool
) -> Answer:
    """§10.7: sent only when no callback was invoked."""
    return Answer(
        "rejected_before_start",
        {
            "request_id": request_id,
            "attempt": target.attempt,
            "fencing_generation": target.fencing_generation,
            "reason": {"code": code, "message": message, "retryable": retryable},
        },
    )


def protocol_error(error: dict[str, Any]) -> Answer:
    return Answer("protocol_error", {"error": error})
