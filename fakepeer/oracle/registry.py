"""The conformance registry (host-contract §13) as the oracle reads it, and the one entry point:
`expect_invoke` gives the Expectation for one well-formed `invoke`."""

from __future__ import annotations

from fakepeer.oracle.history import HistoryIndex
from fakepeer.oracle.model import (
    OPEN_TEXT,
    Ambient,
    AppError,
    Expectation,
    Stop,
    Unmodeled,
    sdk_error,
)
from fakepeer.oracle.modes import Pass
from fakepeer.oracle.program import UNPORTABLE, run_program
from fakepeer.oracle.values import members, obj, string, text
from fakepeer.protocol.values import MAX_DEPTH, value_depth

FUNCTIONS = ("conform.saga", "conform.program", "conform.echo", "conform.unportable")


def expect_invoke(body: dict, request_id: str, ambient: Ambient | None = None) -> Expectation:
    """The answer and effect trace §10-§11 demand for this invoke; Unmodeled when not decided.

    `body` must be a well-formed invoke body (the envelope rules of §2 and §9.1 are the
    envelope fixtures' business, not the oracle's).
    """
    ambient = ambient or Ambient()
    values = [body["input"]] + [e["value"] for e in body["history"] if "value" in e]
    if any(value_depth(value) > MAX_DEPTH for value in values):
        raise Unmodeled("a value over the §4.3 depth limit (the envelope fixtures' business)")
    mode, function = body["mode"], body["function_id"]
    target = body.get("target")
    if mode != "discover":
        if not isinstance(target, dict) or target.get("run_id") != body["run_id"]:
            raise Unmodeled("a targeted invoke without a matching target is malformed")
        if target.get("phase") != {"forward": "forward", "compensate": "compensation"}[mode]:
            raise Unmodeled("a target phase that does not match the mode is malformed")
    if function not in FUNCTIONS:
        if mode == "discover":
            error = {
                "category": "protocol.unknown_function",
                "message": OPEN_TEXT,
                "retryable": False,
                "details": {"pointer": "/body/function_id"},
            }
            return _finish("protocol_error", {"error": error}, (), (), "unknown function")
        return _rejected(body, request_id, "unknown_function", False, "unknown function")
    if mode != "discover" and not ambient.admission:
        return _rejected(body, request_id, "admission_refused", True, "admission is closed")
    pass_ = Pass(body, HistoryIndex(body["history"]))
    if function == "conform.program":
        run_program(body["input"], pass_, ambient)
    elif function == "conform.echo":
        pass_.returned(body["input"])
    elif function == "conform.unportable":
        what = text(body["input"])
        if what in UNPORTABLE:
            pass_.failed(
                sdk_error("sdk.conversion"), "conform.unportable returns an unportable value"
            )
        else:
            pass_.returned(body["input"])
    else:
        _saga(body["input"], pass_)
    answer = pass_.answer
    assert answer is not None
    result = dict(answer.body)
    if answer.kind == "rejected_before_start":
        result["request_id"] = request_id
    return _finish(answer.kind, result, answer.open, tuple(pass_.events), answer.why)


def _rejected(body: dict, request_id: str, code: str, retryable: bool, why: str) -> Expectation:
    target = body["target"]
    result = {
        "request_id": request_id,
        "attempt": target["attempt"],
        "fencing_generation": target["fencing_generation"],
        "reason": {"code": code, "message": OPEN_TEXT, "retryable": retryable},
    }
    return _finish("rejected_before_start", result, (), (), why)


def _finish(kind: str, body: dict, open_: tuple, events: tuple, why: str) -> Expectation:
    """Replace every SDK-chosen text by "" and list its pointer as open."""
    found: list[str] = list(open_)
    cleaned = _clean(body, "/body", found)
    return Expectation(kind, cleaned, tuple(dict.fromkeys(found)), events, why)


def _clean(node: object, pointer: str, found: list[str]) -> object:
    if node == OPEN_TEXT:
        found.append(pointer)
        return ""
    if isinstance(node, dict):
        return {k: _clean(v, f"{pointer}/{_escape(k)}", found) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean(v, f"{pointer}/{i}", found) for i, v in enumerate(node)]
    return node


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _saga(program_input: dict, pass_: Pass) -> None:
    """`conform.saga` (§13.3), written out as its steps."""
    fields = members(program_input)
    order = text(fields.get("order")) if fields is not None else None
    if order is None:
        raise Unmodeled("a conform.saga input without an order string")

    def step(step_id: str, name: str, retry: dict, result: dict, compensate) -> dict:  # type: ignore[no-untyped-def]
        declaration = {
            "type": "step",
            "step_id": step_id,
            "name": name,
            "retry": retry,
            "has_compensation": compensate is not None,
        }
        return pass_.step(step_id, "step", lambda: declaration, lambda context: result, compensate)

    def release(context: dict, forward: dict) -> dict:
        if text(forward) is None:
            raise Unmodeled("a reserve result that is not a string")
        return string("released:" + text(forward))  # type: ignore[operator]

    def refund(context: dict, forward: dict) -> dict:
        charged = (members(forward) or {}).get("charged")
        if charged is None:
            raise Unmodeled("a charge result without `charged`")
        return obj({"refunded": charged})

    given = {"max_attempts": 3, "backoff_ms": "1000"}  # §13.3 gives it (not the default)
    try:
        reservation = step("reserve", "Reserve stock", given, string("reserved:" + order), release)
        charge = step(
            "charge",
            "Charge card",
            {"max_attempts": 5, "backoff_ms": "1000"},
            obj({"charged": string(order)}),
            refund,
        )
        step("notify", "Notify customer", given, {"t": "null"}, None)
    except Stop:
        return
    except AppError as error:
        pass_.failed(error, f"{error.record['category']} escaped conform.saga")
        return
    pass_.returned(obj({"reservation": reservation, "charge": charge}))
