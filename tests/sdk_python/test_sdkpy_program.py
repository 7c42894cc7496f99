"""The `conform.program` interpreter and `conform.saga` on top of the SDK (§13)."""

from __future__ import annotations

from typing import Any

from conform_host.registry import build_registry
from ryusen_sdk import U64, Instant
from sdkpy_helpers import done, failed, run, target

AMBIENT: dict[str, str] = {}
REG = build_registry(AMBIENT)


def _program(*ops: dict[str, Any]) -> dict[str, Any]:
    return {"ops": list(ops)}


def test_catch_stores_the_record_and_catch_never_catches_the_suspension() -> None:
    program = _program(
        {"op": "run", "id": "a", "catch": True, "as": "x"},
        {"op": "sleep", "id": "s", "duration": "bogus", "catch": True, "as": "y"},
        {"op": "run", "id": "b", "catch": True, "as": "z"},
    )
    answer = run(REG, "conform.program", program, {"a": failed("payments.declined", "no")})
    assert answer.kind == "declared"
    assert answer.body["declaration"]["step_id"] == "b"


def test_variables_are_returned_when_the_ops_run_out() -> None:
    program = _program(
        {"op": "run", "id": "a", "catch": True, "as": "x"},
        {"op": "duration", "value": "1.5s", "as": "d"},
        {"op": "json_bytes", "text": '{"b":1,"a":2}', "as": "j"},
    )
    answer = run(REG, "conform.program", program, {"a": failed("payments.declined", "no")})
    value = answer.body["value"]["v"]
    assert value["d"] == {"t": "u64", "v": "1500"}
    assert value["j"] == {"t": "bytes", "v": "eyJhIjoyLCJiIjoxfQ=="}
    assert value["x"]["v"]["caught"]["v"]["category"] == {"t": "str", "v": "payments.declined"}


def test_catch_all_catches_the_suspension_but_the_answer_stays() -> None:
    program = _program(
        {"op": "catch_all", "ops": [{"op": "run", "id": "a"}]},
        {"op": "return", "value": "done"},
    )
    answer = run(REG, "conform.program", program)
    assert answer.kind == "declared"
    assert answer.body["declaration"]["step_id"] == "a"


def test_echo_and_compensation() -> None:
    program = _program({"op": "run", "id": "a", "echo": True, "compensate": True, "as": "a"})
    answer = run(REG, "conform.program", program, mode="forward", target=target("a"))
    assert answer.body["value"]["v"] == {
        "phase": {"t": "str", "v": "forward"},
        "run_id": {"t": "str", "v": "run-1"},
        "step_id": {"t": "str", "v": "a"},
        "operation_id": {"t": "str", "v": "op-7"},
        "attempt": {"t": "i64", "v": "2"},
    }
    answer = run(
        REG,
        "conform.program",
        program,
        {"a": done(U64(5))},
        "compensate",
        target("a", "compensation"),
    )
    assert answer.kind == "compensation_completed"
    assert answer.body["value"]["v"]["forward_result"] == {"t": "u64", "v": "5"}


def test_if_ambient_and_bad_program() -> None:
    program = _program(
        {
            "op": "if_ambient",
            "key": "k",
            "equals": "v",
            "then": [{"op": "run", "id": "t"}],
            "else": [{"op": "run", "id": "e"}],
        },
    )
    assert run(REG, "conform.program", program).body["declaration"]["step_id"] == "e"
    AMBIENT["k"] = "v"
    try:
        assert run(REG, "conform.program", program).body["declaration"]["step_id"] == "t"
    finally:
        AMBIENT.clear()
    answer = run(REG, "conform.program", _program({"op": "teleport"}))
    assert answer.body["error"]["category"] == "conform.bad_program"


def test_sleep_until_and_raise() -> None:
    program = _program({"op": "sleep_until", "id": "t", "deadline": Instant(-5)})
    assert run(REG, "conform.program", program).body["declaration"]["deadline_ms"] == "-5"
    record = {"category": "app.x", "message": "m", "retryable": True, "details": {"k": "v"}}
    answer = run(REG, "conform.program", _program({"op": "raise", "error": record}))
    assert answer.body["error"] == record


def test_saga() -> None:
    order = {"order": "A-1"}
    answer = run(REG, "conform.saga", order)
    assert answer.body["declaration"]["name"] == "Reserve stock"
    history = {"reserve": done("reserved:A-1")}
    answer = run(REG, "conform.saga", order, history)
    assert answer.body["declaration"]["retry"] == {"max_attempts": 5, "backoff_ms": "1000"}
    history["charge"] = done({"charged": "A-1"})
    answer = run(
        REG, "conform.saga", order, history, "compensate", target("charge", "compensation")
    )
    assert answer.body["value"] == {"t": "object", "v": {"refunded": {"t": "str", "v": "A-1"}}}
    answer = run(
        REG, "conform.saga", order, history, "compensate", target("notify", "compensation")
    )
    assert answer.kind == "target_not_found"


def test_repeat_appends_the_iteration_to_every_step_id_and_nests() -> None:
    inner = {"op": "repeat", "times": 2, "ops": [{"op": "run", "id": "s", "as": "last"}]}
    program = _program(
        {"op": "repeat", "times": 2, "ops": [inner, {"op": "sleep", "id": "t", "duration": "1s"}]}
    )
    history = {"s.0.0": done(1), "s.0.1": done(2), "t.0": done(None), "s.1.0": done(3)}
    answer = run(REG, "conform.program", program, history)
    assert answer.body["declaration"]["step_id"] == "s.1.1"  # one op object, prepared once
    history |= {"s.1.1": done(4), "t.1": done(None)}
    answer = run(REG, "conform.program", program, history)
    assert answer.body["value"] == {"t": "object", "v": {"last": {"t": "i64", "v": "4"}}}
    returned = run(
        REG,
        "conform.program",
        _program({"op": "repeat", "times": 3, "ops": [{"op": "return", "value": "r"}]}),
    )
    assert returned.body["value"] == {"t": "str", "v": "r"}
    bad = run(REG, "conform.program", _program({"op": "repeat", "times": "x", "ops": []}))
    assert bad.body["error"]["category"] == "conform.bad_program"
