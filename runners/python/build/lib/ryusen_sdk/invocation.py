"""One invocation (§11): exactly one discovery pass or one targeted execution, one answer.

Nothing is kept between invocations: every pass starts from the history the server sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import answers
from .answers import Answer, Target
from .errors import ConversionError, ProtocolError, error_from_exception
from .registry import Registry
from .values import to_tagged
from .workflow import HistoryEntry, Pass, Suspension, Workflow


@dataclass(frozen=True)
class InvokeRequest:
    """A decoded `invoke` (§9.1): values already converted to Python."""

    request_id: str
    run_id: str
    function_id: str
    mode: str
    input: Any
    history: Mapping[str, HistoryEntry] = field(default_factory=dict)
    target: Target | None = None


def execute(registry: Registry, request: InvokeRequest, admission_open: bool = True) -> Answer:
    """Answer one invocation with the registry's current code (§10, §11)."""
    handler = registry.handler(request.function_id)
    target = request.target
    if handler is None:
        if request.mode == "discover" or target is None:
            error = ProtocolError(
                "protocol.unknown_function",
                "/body/function_id",
                f"the registry declares no function {request.function_id!r}",
            )
            return answers.protocol_error(error.to_record())
        return answers.rejected_before_start(
            request.request_id,
            target,
            "unknown_function",
            f"the registry declares no function {request.function_id!r}",
            False,
        )
    if request.mode != "discover" and target is not None and not admission_open:
        return answers.rejected_before_start(
            request.request_id, target, "admission_refused", "admission is closed", True
        )
    workflow_pass = Pass(request.mode, request.run_id, request.history, target, request.request_id)
    workflow = Workflow(workflow_pass, request.input)
    try:
        result = handler(workflow, request.input)
    except Suspension:
        if workflow_pass.answer is None:  # pragma: no cover - only a pass raises it
            raise
        return workflow_pass.answer
    except Exception as exc:
        if workflow_pass.answer is not None:
            return workflow_pass.answer
        if target is not None and request.mode != "discover":
            return answers.target_not_found(target)
        return answers.failed(error_from_exception(exc).to_record())
    if workflow_pass.answer is not None:
        return workflow_pass.answer
    if target is not None and request.mode != "discover":
        return answers.target_not_found(target)
    try:
        return answers.completed(to_tagged(result))
    except ConversionError as exc:
        return answers.failed(exc.to_record())
