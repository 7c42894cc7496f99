"""`conform.program` (§13.2): a data-driven interpreter over the SDK's public API.

Each op calls the same API an author would (`ctx.step.run`, `ctx.sleep`, ...). `catch` catches
ordinary exceptions only, never the SDK's suspension; `catch_all` deliberately catches anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ryusen_sdk import (
    U64,
    Instant,
    JsonDocument,
    Retry,
    RyusenError,
    StepContext,
    Workflow,
    json_from_bytes,
    json_to_bytes,
    to_wire_millis,
)
from ryusen_sdk.errors import error_from_exception

from .trace import Trace

_MISSING = object()


class PlainObject:
    """An instance of a plain application class: not portable (§13.4)."""

    def __init__(self) -> None:
        self.field = 1


def unportable_value(what: Any) -> Any:
    """The value §13.4 names: `conform.unportable`'s return value and `run.unportable`'s result."""
    if what == "nan":
        return float("nan")
    if what == "infinity":
        return float("inf")
    if what == "non_string_keys":
        return {1: "one"}
    if what == "object":
        return PlainObject()
    if what == "closure":
        return lambda: what
    return what


class NativeFailure(RuntimeError):
    """The `throw` op (§13.2): Python's own error, not an SDK record; the SDK maps it to
    `app.unhandled` (§11.5)."""


class BadProgram(RyusenError):
    """`conform.bad_program`: an op the host does not know, or a malformed op."""

    def __init__(self, message: str) -> None:
        super().__init__("conform.bad_program", message, False, {})


@dataclass(frozen=True)
class Returned:
    """A `return` op ran: unwind the interpreter with this value (not an exception)."""

    value: Any


def _get(op: Mapping[str, Any], name: str, check: Callable[[Any], bool], default: Any = _MISSING):
    if name not in op:
        if default is _MISSING:
            raise BadProgram(f"op {op.get('op')!r} needs member {name!r}")
        return default
    value = op[name]
    if not check(value):
        raise BadProgram(f"op {op.get('op')!r} has a malformed member {name!r}")
    return value


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _any(value: Any) -> bool:
    return True


def _is_str_or_int(value: Any) -> bool:
    return _is_str(value) or _is_int(value)


def _is_ops(value: Any) -> bool:
    return isinstance(value, list)


def parse_record(value: Any) -> dict[str, Any]:
    """An error record written as a plain object (§13.2). Only its shape is checked here: the
    members go to the SDK's record constructor as decoded, so the SDK refuses a category outside
    the grammar or a non-string detail itself (§5.1)."""
    if not isinstance(value, dict):
        raise BadProgram("an error record is an object")
    record: dict[str, Any] = {
        "category": value.get("category"),
        "message": value.get("message", ""),
        "retryable": value.get("retryable", False),
        "details": value.get("details", {}),
    }
    if "cause" in value:
        record["cause"] = parse_record(value["cause"])
    return record


def _echo(step: StepContext) -> dict[str, Any]:
    return {
        "run_id": step.run_id,
        "step_id": step.step_id,
        "operation_id": step.operation_id,
        "attempt": step.attempt,
    }


class Program:
    """One run of the interpreter over one workflow context."""

    def __init__(self, ctx: Workflow, ambient: Mapping[str, str], trace: Trace) -> None:
        self.ctx = ctx
        self.ambient = ambient
        self.trace = trace
        self.variables: dict[str, Any] = {}
        self.suffix = ""  # what `repeat` appends to step IDs (§13.2)
        # Each op object reached, prepared (the input outlives the program: ids stay unique).
        self._prepared: dict[int, tuple[Callable[[str], Any], bool, Any]] = {}

    def main(self, program_input: Any) -> Any:
        if not isinstance(program_input, dict) or not isinstance(program_input.get("ops"), list):
            raise BadProgram('the program input is {"ops": [...]}')
        returned = self.run_ops(program_input["ops"])
        if returned is not None:
            return returned.value
        return dict(self.variables)

    def run_ops(self, ops: list[Any]) -> Returned | None:
        for op in ops:
            returned = self.run_op(op)
            if returned is not None:
                return returned
        return None

    def run_op(self, op: Any) -> Returned | None:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise BadProgram("an op is an object with a string member op")
        name = op["op"]
        if name == "raise":
            raise RyusenError.from_record(parse_record(_get(op, "error", _any)))
        if name == "return":
            if "value" in op:
                return Returned(op["value"])
            variable = _get(op, "var", _is_str)
            if variable not in self.variables:
                raise BadProgram(f"no variable {variable!r}")
            return Returned(self.variables[variable])
        if name == "if_ambient":
            key = _get(op, "key", _is_str)
            equals = _get(op, "equals", _is_str)
            then_ops = _get(op, "then", _is_ops)
            else_ops = _get(op, "else", _is_ops, [])
            return self.run_ops(then_ops if self.ambient.get(key) == equals else else_ops)
        if name == "repeat":
            return self._repeat(_get(op, "times", _is_int), _get(op, "ops", _is_ops))
        if name == "catch_all":
            nested = _get(op, "ops", _is_ops)
            try:
                return self.run_ops(nested)
            except BaseException as exc:  # noqa: BLE001 - deliberately a misbehaving workflow
                self.trace.caught("catch_all", exc)
                return None
        prepared = self._prepared.get(id(op))
        if prepared is None:  # `repeat` reaches one op many times: its members are read once
            prepared = self._prepared[id(op)] = self._prepare(name, op)
        action, catch, target = prepared
        if catch:
            try:
                result = action(self.suffix)
            except Exception as exc:  # never the suspension: it is a BaseException
                self.trace.caught("catch", exc)
                result = {"caught": error_from_exception(exc).to_record()}
        else:
            result = action(self.suffix)
        if target is not None:
            self.variables[target] = result
        return None

    def _repeat(self, times: int, ops: list[Any]) -> Returned | None:
        """Run `ops` `times` times, iteration k declaring every step ID with `.k` appended."""
        outer = self.suffix
        try:
            for index in range(times):
                self.suffix = f"{outer}.{index}"
                returned = self.run_ops(ops)
                if returned is not None:
                    return returned
        finally:
            self.suffix = outer
        return None

    def _prepare(self, name: str, op: dict[str, Any]) -> tuple[Callable[[str], Any], bool, Any]:
        """An op's call (given the step-ID suffix), its `catch` and its `as`, members checked."""
        action = self._action(name, op)
        return action, _get(op, "catch", _is_bool, False), _get(op, "as", _is_str, None)

    def _action(self, name: str, op: dict[str, Any]) -> Callable[[str], Any]:
        """Validate an op's members and return the call it makes (run later, maybe caught)."""
        ctx = self.ctx
        if name == "run":
            return self._run(op)
        if name == "sleep":
            step_id = _get(op, "id", _is_str)
            duration = _get(op, "duration", _is_str_or_int)
            return lambda suffix: ctx.sleep(step_id + suffix, duration)
        if name == "sleep_until":
            step_id = _get(op, "id", _is_str)
            deadline = _get(op, "deadline", lambda v: isinstance(v, Instant))
            return lambda suffix: ctx.sleep_until(step_id + suffix, deadline)
        if name == "wait":
            step_id = _get(op, "id", _is_str)
            event = _get(op, "event", _is_str)
            correlation = _get(op, "correlation", _any, {})  # the SDK checks it
            timeout = _get(op, "timeout", _is_str_or_int)
            return lambda suffix: ctx.wait_for_event(
                step_id + suffix, event, correlation, timeout=timeout
            )
        if name == "invoke":
            step_id = _get(op, "id", _is_str)
            function = _get(op, "function", _is_str)
            child_input = _get(op, "input", _any)
            timeout = _get(op, "timeout", _is_str_or_int, None)
            return lambda suffix: ctx.invoke(step_id + suffix, function, child_input, timeout)
        if name == "emit":
            step_id = _get(op, "id", _is_str)
            event = _get(op, "event", _is_str)
            payload = _emit_payload(op)
            metadata = _get(op, "metadata", _any, None)  # the SDK checks it
            attempts = _get(op, "attempts", _is_int, None)
            return lambda suffix: ctx.emit(step_id + suffix, event, payload, metadata, attempts)
        if name == "duration":
            value = _get(op, "value", _is_str_or_int)
            return lambda suffix: U64(to_wire_millis(value))
        if name == "json_bytes":
            text = _get(op, "text", _is_str)
            return lambda suffix: json_to_bytes(json_from_bytes(text.encode("utf-8")))
        if name == "throw":
            message = _get(op, "message", _is_str)

            def throw(suffix: str) -> Any:
                raise NativeFailure(message)

            return throw
        raise BadProgram(f"unknown op {name!r}")

    def _run(self, op: dict[str, Any]) -> Callable[[str], Any]:
        step_id = _get(op, "id", _is_str)
        name = _get(op, "name", _is_str, None)
        attempts = _get(op, "attempts", _is_int, None)
        result = _get(op, "result", _any, None)
        fail = parse_record(op["fail"]) if "fail" in op else None
        throw = _get(op, "throw", _is_str, None)
        echo = _get(op, "echo", _is_bool, False)
        unportable = _get(op, "unportable", _is_str, None)
        compensate_spec = _get(op, "compensate", _any, False)
        retry = Retry(max_attempts=attempts, backoff=1000) if attempts is not None else None

        trace = self.trace

        def callback(step: StepContext) -> Any:
            trace.started(step, "forward")
            if fail is not None:
                raise RyusenError.from_record(fail)
            if throw is not None:
                raise NativeFailure(throw)
            if echo:
                return {"phase": "forward"} | _echo(step)
            if unportable is not None:
                return unportable_value(unportable)
            return result

        compensate: Callable[[StepContext, Any], Any] | None
        if isinstance(compensate_spec, dict) and {"fail", "throw"} <= compensate_spec.keys():
            raise BadProgram("compensate takes fail or throw, not both (§13.5)")
        if compensate_spec is True or (
            isinstance(compensate_spec, dict) and not {"fail", "throw"} & compensate_spec.keys()
        ):  # `{}`: neither fail nor throw is a returning compensator, as `true` (§13.5)

            def compensate(step: StepContext, forward: Any) -> Any:
                trace.started(step, "compensation")
                return {"phase": "compensation"} | _echo(step) | {"forward_result": forward}

        elif isinstance(compensate_spec, dict) and "fail" in compensate_spec:
            compensate_fail = parse_record(compensate_spec["fail"])

            def compensate(step: StepContext, forward: Any) -> Any:
                trace.started(step, "compensation")
                raise RyusenError.from_record(compensate_fail)

        elif isinstance(compensate_spec, dict) and "throw" in compensate_spec:
            compensate_throw = _get(compensate_spec, "throw", _is_str)

            def compensate(step: StepContext, forward: Any) -> Any:
                trace.started(step, "compensation")
                raise NativeFailure(compensate_throw)

        elif compensate_spec is False:
            compensate = None
        else:
            raise BadProgram('compensate is true, {"fail": error} or {"throw": message}')
        return lambda suffix: self.ctx.step.run(
            step_id + suffix, callback, name=name, retry=retry, compensate=compensate
        )


def _emit_payload(op: dict[str, Any]) -> Any:
    """`payload` (a protocol value, passed as is) or `json` (JSON text the host parses into a
    native document and passes as a JsonDocument), exactly one of them (§13.2)."""
    if ("payload" in op) == ("json" in op):
        raise BadProgram("emit takes exactly one of payload and json")
    if "payload" in op:
        return op["payload"]
    text = _get(op, "json", _is_str)
    try:
        return JsonDocument(json.loads(text))
    except ValueError as exc:
        raise BadProgram(f"emit json is not JSON text: {exc}") from None
