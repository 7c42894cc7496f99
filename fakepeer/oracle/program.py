"""The `conform.program` interpreter as host-contract §13.2 describes it, on the oracle's pass.

Ops are read when reached; a malformed op raises BadProgram (the function fails with
`conform.bad_program`); `catch: true` catches application errors, never the stop signal;
`catch_all` catches both (a caught stop ends the oracle's reading: the answer is fixed).
"""

from __future__ import annotations

import base64
import json
import math

from fakepeer.oracle import trace
from fakepeer.oracle.model import (
    OPEN_TEXT,
    Ambient,
    AppError,
    BadProgram,
    Stop,
    Unmodeled,
    sdk_error,
    unhandled,
)
from fakepeer.oracle.modes import Pass
from fakepeer.oracle.values import (
    NULL,
    integer,
    is_true,
    items,
    members,
    need_text,
    obj,
    record_value,
    sdk_value,
    string,
    text,
    written_record,
)
from fakepeer.protocol.durations import DurationError, duration_ms
from fakepeer.protocol.json_convenience import JsonConvenienceError, json_from_bytes, json_to_bytes
from fakepeer.protocol.values import format_f64, has_lone_surrogate

UNPORTABLE = frozenset({"nan", "infinity", "non_string_keys", "object", "closure"})
DEFAULT_RETRY = {"max_attempts": 3, "backoff_ms": "1000"}
INVALID_DECLARATION = "sdk.invalid_declaration"


class _Return(Exception):
    def __init__(self, value: dict) -> None:
        self.value = value


def run_program(program_input: dict, pass_: Pass, ambient: Ambient) -> None:
    """Interpret the program; the pass holds the answer afterwards."""
    fields = members(program_input)
    ops = items(fields.get("ops")) if fields is not None else None
    interpreter = _Interpreter(pass_, ambient)
    try:
        if ops is None:
            raise BadProgram("the input is not an object with an ops array (D-PROGRAM-INPUT)")
        interpreter.run_ops(ops, top=True)
    except Stop:
        return
    except _Return as done:
        pass_.returned(done.value)
        return
    except BadProgram:
        bad = {
            "category": "conform.bad_program",
            "message": OPEN_TEXT,
            "retryable": False,
            "details": {},
        }
        pass_.failed(AppError(bad, sdk_made=True), "a malformed program op (conform.bad_program)")
        return
    except AppError as error:
        pass_.failed(error, f"{error.record['category']} escaped the function")
        return
    pass_.returned(obj(dict(interpreter.variables)))


def _duration(value: object, member: str) -> int:
    """A duration member: a string is §6 text, an integer the typed form in ms (§13.2)."""
    if text(value) is not None:
        source: str | int = text(value)  # type: ignore[assignment]
    elif integer(value) is not None:
        source = integer(value)  # type: ignore[assignment]
    elif value is None:
        raise BadProgram(f"member {member!r} is required")
    else:
        raise Unmodeled(f"a {member} that is neither a string nor an i64")
    try:
        return duration_ms(source)
    except DurationError:
        raise sdk_error("sdk.invalid_duration") from None


def _string_map(value: object) -> dict | None:
    """A correlation or metadata map as the SDK sees it: None when it is not strings only."""
    fields = members(value)
    if fields is None or any(text(item) is None for item in fields.values()):
        return None
    return {key: text(item) for key, item in fields.items()}


def _as_given(doc: object) -> str:
    """JSON text of a document as given (§10.1): member order kept, an int with every digit, a
    float as its f64 text (negative zero `-0`), as the Python reference SDK writes it. Where the
    language decides the spelling (big integers, negative zero) the fixtures leave it open."""
    if doc is None or isinstance(doc, bool):
        return json.dumps(doc)
    if isinstance(doc, int):
        return str(doc)
    if isinstance(doc, float):
        return format_f64(doc)
    if isinstance(doc, str):
        if has_lone_surrogate(doc):
            raise Unmodeled("a lone surrogate in an emitted JSON document")
        return json.dumps(doc, ensure_ascii=False)
    if isinstance(doc, list):
        return "[" + ",".join(_as_given(item) for item in doc) + "]"
    return "{" + ",".join(_as_given(k) + ":" + _as_given(v) for k, v in doc.items()) + "}"


#: The pointer of an emission's payload bytes in a `declared` answer.
PAYLOAD_BYTES = "/body/declaration/payload/v"


def _language_spelled(doc: object) -> bool:
    """Whether a document holds a number whose text depends on the SDK's language (§10.1): an
    integer beyond ±2^53 (exact in Python or Go, a double in JavaScript) or a negative zero."""
    if isinstance(doc, bool) or doc is None or isinstance(doc, str):
        return False
    if isinstance(doc, int):
        return abs(doc) > 2**53
    if isinstance(doc, float):
        return doc == 0 and math.copysign(1.0, doc) < 0
    if isinstance(doc, list):
        return any(_language_spelled(item) for item in doc)
    return any(_language_spelled(item) for item in doc.values())  # type: ignore[attr-defined]


def _strict_json(source: str) -> object:
    def pairs(found: list) -> dict:
        keys = [key for key, _ in found]
        if len(set(keys)) != len(keys):
            raise Unmodeled("a JSON text with a repeated key")
        return dict(found)

    def constant(name: str) -> object:
        raise Unmodeled(f"a JSON text with the literal {name}")

    try:
        return json.loads(source, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError:
        raise Unmodeled("an emit json text that is not JSON") from None


class _Interpreter:
    def __init__(self, pass_: Pass, ambient: Ambient) -> None:
        self.pass_ = pass_
        self.ambient = ambient
        self.variables: dict[str, dict] = {}
        self.depth = 0

    def run_ops(self, ops: list, top: bool = False) -> None:
        for op in ops:
            self.run_op(op)

    def run_op(self, op: object) -> None:
        fields = members(op)
        if fields is None:
            raise BadProgram("an op must be an object")
        name = text(fields.get("op"))
        handler = getattr(self, f"op_{name}", None) if name else None
        if handler is None:
            raise BadProgram(f"unknown op {name!r}")
        if name in ("raise", "return", "if_ambient", "catch_all"):
            handler(fields)
            return
        target = fields.get("as")
        if target is not None and text(target) is None:
            raise BadProgram("member 'as' must be a string")
        try:
            result = handler(fields)
        except AppError as error:
            if not is_true(fields.get("catch")):
                raise
            self.pass_.events.append(trace.caught("catch", error.record["category"]))
            if target is not None:
                self.variables[text(target)] = obj({"caught": record_value(error.record)})  # type: ignore[index]
            return
        if target is not None:
            self.variables[text(target)] = result  # type: ignore[index]

    # ---------------------------------------------------------------- step calls

    def op_run(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        name = text(op["name"]) if "name" in op else step_id
        if name is None:
            raise BadProgram("member 'name' must be a string")
        attempts = op.get("attempts")
        if attempts is not None and integer(attempts) is None:
            raise Unmodeled("attempts that is not an i64")
        compensator = self._compensator(op.get("compensate"))

        def declare() -> dict:
            retry = dict(DEFAULT_RETRY)
            if attempts is not None:
                count = integer(attempts)
                assert count is not None
                if not 1 <= count <= 1000:
                    raise sdk_error(INVALID_DECLARATION)
                retry["max_attempts"] = count
            return {
                "type": "step",
                "step_id": step_id,
                "name": name,
                "retry": retry,
                "has_compensation": compensator is not None,
            }

        def callback(context: dict) -> dict:
            if "fail" in op:
                record = written_record(op["fail"])
                raise AppError(record) if record else sdk_error("sdk.conversion")
            if is_true(op.get("echo")):
                return _context_value("forward", context)
            if "throw" in op:
                raise unhandled(need_text(op, "throw"))
            if "unportable" in op:
                what = need_text(op, "unportable")
                if what in UNPORTABLE:
                    raise sdk_error("sdk.conversion")
                return string(what)
            return op.get("result", NULL)

        if "fail" in op:
            written_record(op["fail"])  # a non-object record is a malformed op when reached
        return self.pass_.step(step_id, "step", declare, callback, compensator)

    def _compensator(self, spec: object):  # type: ignore[no-untyped-def]
        if spec is None or (
            isinstance(spec, dict) and spec.get("t") == "bool" and not spec.get("v")
        ):
            return None
        if is_true(spec):

            def returns(context: dict, forward: dict) -> dict:
                value = _context_value("compensation", context)
                value["v"]["forward_result"] = forward
                return value

            return returns
        fields = members(spec)
        if fields is not None and "fail" in fields and "throw" not in fields:
            written_record(fields["fail"])

            def fails(context: dict, forward: dict) -> dict:
                record = written_record(fields["fail"])
                raise AppError(record) if record else sdk_error("sdk.conversion")

            return fails
        if fields is not None and "throw" in fields and "fail" not in fields:
            message = need_text(fields, "throw")

            def throws(context: dict, forward: dict) -> dict:
                raise unhandled(message)

            return throws
        raise Unmodeled("a compensate member of another shape")

    def op_sleep(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        if "duration" not in op:
            raise BadProgram("sleep needs a duration")

        def declare() -> dict:
            count = _duration(op["duration"], "duration")
            return {"type": "timer", "step_id": step_id, "delay_ms": str(count)}

        return self.pass_.step(step_id, "timer", declare)

    def op_sleep_until(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        deadline = op.get("deadline")
        if not (isinstance(deadline, dict) and deadline.get("t") == "instant"):
            raise BadProgram("sleep_until needs an instant deadline")
        declaration = {"type": "timer", "step_id": step_id, "deadline_ms": deadline["v"]}
        return self.pass_.step(step_id, "timer", lambda: declaration)

    def op_wait(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        event = need_text(op, "event")
        if "timeout" not in op:
            raise BadProgram("wait needs a timeout")
        correlation = _string_map(op.get("correlation", obj({})))

        def declare() -> dict:
            if correlation is None:  # before the timeout, in signature order (D-ARGUMENT-ORDER)
                raise sdk_error(INVALID_DECLARATION)
            count = _duration(op["timeout"], "timeout")
            return {
                "type": "wait",
                "step_id": step_id,
                "event": event,
                "correlation": correlation,
                "timeout_ms": str(count),
            }

        return self.pass_.step(step_id, "wait", declare)

    def op_invoke(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        function = need_text(op, "function")
        if "input" not in op:
            raise BadProgram("invoke needs an input")

        def declare() -> dict:
            # the input is a language value encoded again (§3.5): unknown members dropped; it is
            # converted before the timeout, in signature order (D-ARGUMENT-ORDER)
            value = sdk_value(op["input"])
            declaration = {
                "type": "invoke",
                "step_id": step_id,
                "function_id": function,
                "input": value,
            }
            if "timeout" in op:
                declaration["timeout_ms"] = str(_duration(op["timeout"], "timeout"))
            return declaration

        return self.pass_.step(step_id, "invoke", declare)

    def op_emit(self, op: dict) -> dict:
        step_id = need_text(op, "id")
        event = need_text(op, "event")
        if ("payload" in op) == ("json" in op):
            raise BadProgram("emit needs exactly one of payload and json")
        attempts = op.get("attempts")
        if attempts is not None and integer(attempts) is None:
            raise Unmodeled("emit attempts that is not an i64")
        metadata = _string_map(op.get("metadata", obj({})))
        payload = None
        spelled: tuple[str, ...] = ()
        if "json" in op:
            document = _strict_json(need_text(op, "json"))
            payload = _as_given(document).encode("utf-8")
            if _language_spelled(document):  # the bytes are the SDK language's (D-EMIT-PAYLOAD)
                spelled = (PAYLOAD_BYTES,)
        elif isinstance(op["payload"], dict) and op["payload"].get("t") == "bytes":
            payload = base64.b64decode(op["payload"]["v"])
        # each refusal here is sdk.invalid_declaration, so their order is not observable
        faults = [
            payload is None,
            metadata is None,
            attempts is not None and integer(attempts) != 1,
        ]

        def declare() -> dict:
            if any(faults):
                raise sdk_error(INVALID_DECLARATION)
            encoded = base64.b64encode(payload).decode("ascii")  # type: ignore[arg-type]
            return {
                "type": "emit",
                "step_id": step_id,
                "event": event,
                "payload": {"t": "bytes", "v": encoded},
                "metadata": metadata,
            }

        return self.pass_.step(step_id, "emit", declare, open_=spelled)

    # ---------------------------------------------------------------- plain ops

    def op_duration(self, op: dict) -> dict:
        if "value" not in op:
            raise BadProgram("duration needs a value")
        return {"t": "u64", "v": str(_duration(op["value"], "value"))}

    def op_json_bytes(self, op: dict) -> dict:
        source = need_text(op, "text")
        if has_lone_surrogate(source):
            raise Unmodeled("json_bytes text with a lone surrogate")
        try:
            data = json_to_bytes(json_from_bytes(source.encode("utf-8")))
        except JsonConvenienceError:
            raise sdk_error("sdk.json") from None
        return {"t": "bytes", "v": base64.b64encode(data).decode("ascii")}

    def op_raise(self, op: dict) -> None:
        if "error" not in op:
            raise BadProgram("raise needs an error")
        record = written_record(op["error"])
        raise AppError(record) if record else sdk_error("sdk.conversion")

    def op_throw(self, op: dict) -> dict:
        raise unhandled(need_text(op, "message"))

    def op_return(self, op: dict) -> None:
        if "value" in op:
            raise _Return(op["value"])
        name = need_text(op, "var")
        if name not in self.variables:
            raise Unmodeled(f"return of the unassigned variable {name!r}")
        raise _Return(self.variables[name])

    def op_if_ambient(self, op: dict) -> None:
        key, equals = need_text(op, "key"), need_text(op, "equals")
        then = items(op.get("then"))
        otherwise = items(op.get("else", {"t": "array", "v": []}))
        if then is None or otherwise is None:
            raise BadProgram("if_ambient needs then (and else) op arrays")
        self.run_ops(then if self.ambient.values.get(key) == equals else otherwise)

    def op_catch_all(self, op: dict) -> None:
        nested = items(op.get("ops"))
        if nested is None:
            raise BadProgram("catch_all needs an ops array")
        try:
            self.run_ops(nested)
        except AppError as error:
            self.pass_.events.append(trace.caught("catch_all", error.record["category"]))
        except (_Return, BadProgram):
            raise Unmodeled("a return or a malformed op inside catch_all") from None


def _context_value(phase: str, context: dict) -> dict:
    return obj(
        {
            "phase": string(phase),
            "run_id": string(context["run_id"]),
            "step_id": string(context["step_id"]),
            "operation_id": string(context["operation_id"]),
            "attempt": {"t": "i64", "v": str(context["attempt"])},
        }
    )
