"""The workflow context and the per-pass decision machine (§11.1-§11.4).

A workflow function receives a `Workflow` (`ctx`). Every durable call (`ctx.step.run`,
`ctx.sleep`, ...) goes through one `Pass`, which replays history, stops at the first
unresolved boundary or the target, and unwinds the function with `Suspension`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from . import answers
from .answers import Answer, Target
from .durations import DurationLike, to_wire_millis
from .errors import (
    ConversionError,
    InvalidDeclarationError,
    RyusenError,
    error_from_exception,
)
from .payloads import JsonDocument, event_payload_bytes
from .values import I64_MAX, I64_MIN, Instant, to_tagged

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class Suspension(BaseException):  # noqa: N818 - a control signal, not an error
    """The SDK-internal signal that stops a pass (§11.2 item 6).

    It derives from BaseException so an application's `except Exception` never catches it.
    """


@dataclass(frozen=True)
class Retry:
    """Retry metadata of a step: attempts in total and the backoff between them (§10.1)."""

    max_attempts: int = 3
    backoff: DurationLike = 1000

    def to_wire(self) -> dict[str, Any]:
        """`{"max_attempts", "backoff_ms"}`, refusing out-of-range metadata."""
        attempts, backoff = self.max_attempts, self.backoff
        try:  # every replayed step declares its retry again: the conversion is remembered
            key = (type(attempts), attempts, type(backoff), backoff)
            return dict(_retry_wire(key))
        except TypeError:  # an unhashable value: converted (and refused) uncached
            return _retry_wire.__wrapped__((type(attempts), attempts, type(backoff), backoff))


@functools.lru_cache(maxsize=256)
def _retry_wire(key: tuple[type, Any, type, Any]) -> dict[str, Any]:
    _, attempts, _, backoff = key
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise InvalidDeclarationError("max_attempts must be an integer")
    if not 1 <= attempts <= 1000:
        raise InvalidDeclarationError("max_attempts must be between 1 and 1000")
    return {"max_attempts": attempts, "backoff_ms": str(to_wire_millis(backoff))}


DEFAULT_RETRY = Retry()


@dataclass(frozen=True)
class StepContext:
    """What a callback or compensator learns about its execution: server-supplied identity."""

    run_id: str
    step_id: str
    operation_id: str
    attempt: int
    phase: str


class Source(NamedTuple):
    """Where in application code a step was declared (optional blocker metadata, §10.5).

    A tuple, not a frozen dataclass: replay records one for every step of every invocation.
    """

    file: str
    line: int

    def to_wire(self) -> dict[str, Any]:
        return {"file": self.file, "line": max(self.line, 1)}


@functools.cache
def _in_package(filename: str) -> bool:
    """Whether code from `filename` is the SDK's own (cached: asked for every declaration)."""
    return os.path.dirname(filename) == _PACKAGE_DIR


@functools.cache
def _file_name(filename: str) -> str:
    return os.path.basename(filename)


def _caller_source() -> Source:
    frame = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return Source("<unknown>", 1)
    return Source(_file_name(frame.f_code.co_filename), frame.f_lineno)


class DecisionMachine:
    """Answers each declaration of one pass: a step ID met twice is the definition blocker.

    The machine itself has no notion of a stopped pass: a repeated ID is blocked even when the
    first encounter suspended the pass (RFD 2). `Pass` is the layer that stops asking it.
    """

    def __init__(self) -> None:
        self._first: dict[str, Source] = {}

    def encounter(self, step_id: str, source: Source) -> Answer | None:
        """Record a declaration; return `definition_blocked` when the ID was already met."""
        first = self._first.get(step_id)
        if first is not None:
            return Answer(
                "definition_blocked",
                {
                    "reason": "duplicate_step_id",
                    "step_id": step_id,
                    "first_source": first.to_wire(),
                    "duplicate_source": source.to_wire(),
                },
            )
        self._first[step_id] = source
        return None


@dataclass(frozen=True)
class HistoryEntry:
    """An accepted step result (`value`) or terminal step failure (`error`), decoded."""

    status: str
    value: Any = None
    error: Mapping[str, Any] | None = None


class Pass:
    """One discovery pass or one targeted execution over the function (§11.2-§11.4)."""

    def __init__(
        self,
        mode: str,
        run_id: str,
        history: Mapping[str, HistoryEntry],
        target: Target | None = None,
        request_id: str = "",
    ) -> None:
        self.mode = mode
        self.run_id = run_id
        self.history = history
        self.target = target
        self.request_id = request_id
        self.machine = DecisionMachine()
        self.answer: Answer | None = None
        self._in_callback = False

    @property
    def stopped(self) -> bool:
        return self.answer is not None

    def check_open(self) -> None:
        """A stopped pass answers no later declaration: suspend again at once (§11.2 item 4)."""
        if self.answer is not None:
            raise Suspension()
        if self._in_callback:
            raise InvalidDeclarationError("a callback cannot declare durable steps")

    def is_compensation_target(self, step_id: str) -> bool:
        """Whether a call of `step_id` is this compensation's target (§11.4)."""
        return (
            self.mode == "compensate" and self.target is not None and step_id == self.target.step_id
        )

    def _stop(self, answer: Answer) -> Suspension:
        self.answer = answer
        return Suspension()

    def claim(self, step_id: str, source: Source) -> None:
        """Meet a step ID in this pass: the duplicate check comes before argument conversion.

        A repeated ID (after a replayed first encounter) stops the pass with the blocker.
        """
        self.check_open()
        blocked = self.machine.encounter(step_id, source)
        if blocked is not None:
            raise self._stop(blocked)

    def decide(
        self,
        step_id: str,
        kind: str,
        declaration: dict[str, Any],
        callback: Callable[[StepContext], Any] | None = None,
        compensate: Callable[[StepContext, Any], Any] | None = None,
    ) -> Any:
        """Decide a claimed declaration: replay it, or stop the pass with the right answer."""
        entry = self.history.get(step_id)
        target = self.target
        if self.mode == "discover" or target is None:
            if entry is not None:
                return _replay(entry)
            raise self._stop(answers.declared(declaration))
        if step_id == target.step_id:
            if kind != "step":
                raise self._stop(
                    answers.rejected_before_start(
                        self.request_id,
                        target,
                        "unsupported_target",
                        f"step {step_id!r} is a {kind}, not a step.run with a callback",
                        False,
                    )
                )
            if self.mode == "forward":
                assert callback is not None
                raise self._stop(self._execute(callback, (), "step"))
            if entry is None or entry.status != "completed" or compensate is None:
                raise self._stop(answers.target_not_found(target))
            raise self._stop(self._execute(compensate, (entry.value,), "compensation"))
        if entry is not None:
            return _replay(entry)
        # An unresolved step other than the target: targeted modes never discover new work.
        raise self._stop(answers.target_not_found(target))

    def _execute(self, function: Callable[..., Any], extra: tuple[Any, ...], kind: str) -> Answer:
        """Run the target's one callback; map its outcome to `<kind>_completed/_failed`."""
        target = self.target
        assert target is not None
        context = StepContext(
            run_id=self.run_id,
            step_id=target.step_id,
            operation_id=target.operation_id,
            attempt=target.attempt,
            phase=target.phase,
        )
        self._in_callback = True
        try:
            value = to_tagged(function(context, *extra))
        except Exception as exc:  # a callback-attempt failure, never a workflow failure
            body = target.identity() | {"error": error_from_exception(exc).to_record()}
            return Answer(f"{kind}_failed", body)
        finally:
            self._in_callback = False
        return Answer(f"{kind}_completed", target.identity() | {"value": value})


def _replay(entry: HistoryEntry) -> Any:
    if entry.status == "completed":
        return entry.value
    assert entry.error is not None
    raise RyusenError.from_record(entry.error)


def _check_step_id(step_id: object) -> str:
    if not isinstance(step_id, str):
        raise InvalidDeclarationError("a step ID is an explicit string")
    return step_id


def _string_map(mapping: Mapping[str, str] | None, what: str) -> dict[str, str]:
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping):
        raise InvalidDeclarationError(f"{what} is a mapping of strings to strings")
    for key, value in mapping.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidDeclarationError(f"{what} is a mapping of strings to strings")
    return dict(mapping)


def _instant_millis(instant: Instant | datetime) -> int:
    if isinstance(instant, Instant):
        return instant.ms
    if isinstance(instant, datetime) and instant.tzinfo is not None:
        delta = instant - datetime(1970, 1, 1, tzinfo=UTC)
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        ms = -(-micros // 1000)
        if I64_MIN <= ms <= I64_MAX:
            return ms
    raise ConversionError("sleep_until takes an Instant or a timezone-aware datetime")


class StepApi:
    """`ctx.step`: the base API, `ctx.step.run(...)`."""

    def __init__(self, workflow_pass: Pass) -> None:
        self._pass = workflow_pass

    def run(
        self,
        id: str,
        callback: Callable[[StepContext], Any],
        name: str | None = None,
        retry: Retry | None = None,
        compensate: Callable[[StepContext, Any], Any] | None = None,
    ) -> Any:
        """Run `callback(step)` durably as step `id`; return its (recorded) result.

        `compensate(step, forward_result)` is the optional compensator used by an unwind.
        """
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        if not callable(callback):
            raise InvalidDeclarationError("step.run needs a callback")
        if compensate is not None and not callable(compensate):
            raise InvalidDeclarationError("a compensator must be callable")
        if self._pass.is_compensation_target(step_id):
            # Compensation declares nothing: the target's display name and retry describe its
            # forward work and are not converted, so a bad one never loses the undo (§11.4,
            # D-CONVERT-BEFORE-REPLAY); only the compensator (checked above) is used.
            return self._pass.decide(step_id, "step", {}, callback, compensate)
        if name is not None and not isinstance(name, str):
            raise InvalidDeclarationError("a step name is a string")
        declaration = {
            "type": "step",
            "step_id": step_id,
            "name": step_id if name is None else name,
            "retry": (retry if retry is not None else DEFAULT_RETRY).to_wire(),
            "has_compensation": compensate is not None,
        }
        return self._pass.decide(step_id, "step", declaration, callback, compensate)


class Workflow:
    """The context a workflow function receives: durable steps, timers, waits, children, emits."""

    def __init__(self, workflow_pass: Pass, input: Any = None) -> None:
        self._pass = workflow_pass
        self.run_id = workflow_pass.run_id
        self.input = input
        self.step = StepApi(workflow_pass)

    def sleep(self, id: str, duration: DurationLike) -> None:
        """A durable timer waking after `duration` (§6: rounded up, negative is due now)."""
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        delay = to_wire_millis(duration)
        declaration = {"type": "timer", "step_id": step_id, "delay_ms": str(delay)}
        return self._pass.decide(step_id, "timer", declaration)

    def sleep_until(self, id: str, instant: Instant | datetime) -> None:
        """A durable timer waking at an absolute instant (never converted by §6)."""
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        deadline = _instant_millis(instant)
        declaration = {"type": "timer", "step_id": step_id, "deadline_ms": str(deadline)}
        return self._pass.decide(step_id, "timer", declaration)

    def wait_for_event(
        self,
        id: str,
        event: str,
        correlation: Mapping[str, str] | None = None,
        *,
        timeout: DurationLike,
    ) -> bytes:
        """Wait durably for an event named `event` whose metadata includes `correlation`.

        Returns the matched payload bytes; an elapsed timeout raises `sdk.timeout`.
        """
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        if not isinstance(event, str):
            raise InvalidDeclarationError("an event name is a string")
        declaration = {
            "type": "wait",
            "step_id": step_id,
            "event": event,
            "correlation": _string_map(correlation, "a correlation"),
            "timeout_ms": str(to_wire_millis(timeout)),
        }
        return self._pass.decide(step_id, "wait", declaration)  # type: ignore[no-any-return]

    def invoke(
        self, id: str, function_id: str, input: Any, timeout: DurationLike | None = None
    ) -> Any:
        """Run `function_id` of this application as a durable child; return its value."""
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        if not isinstance(function_id, str):
            raise InvalidDeclarationError("a function ID is a string")
        declaration: dict[str, Any] = {
            "type": "invoke",
            "step_id": step_id,
            "function_id": function_id,
            "input": to_tagged(input),
        }
        if timeout is not None:
            declaration["timeout_ms"] = str(to_wire_millis(timeout))
        return self._pass.decide(step_id, "invoke", declaration)

    def emit(
        self,
        id: str,
        event: str,
        payload: bytes | JsonDocument,
        metadata: Mapping[str, str] | None = None,
        retry: Retry | int | None = None,
    ) -> str:
        """Emit an event durably; return the receipt.

        `payload` is bytes (sent unchanged) or a `JsonDocument` (serialized as given, §10.1);
        anything else is refused. More than one attempt is refused.
        """
        self._pass.check_open()
        step_id = _check_step_id(id)
        self._pass.claim(step_id, _caller_source())
        if not isinstance(event, str):
            raise InvalidDeclarationError("an event name is a string")
        if retry is not None:
            attempts = retry.max_attempts if isinstance(retry, Retry) else retry
            if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts != 1:
                raise InvalidDeclarationError("an emission is accepted once: one attempt only")
        data = event_payload_bytes(payload)
        declaration = {
            "type": "emit",
            "step_id": step_id,
            "event": event,
            "payload": to_tagged(data),
            "metadata": _string_map(metadata, "emission metadata"),
        }
        return self._pass.decide(step_id, "emit", declaration)  # type: ignore[no-any-return]
