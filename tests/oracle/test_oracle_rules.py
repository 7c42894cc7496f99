"""Single rules of the oracle, each checked on one invoke it decides."""

from __future__ import annotations

from fakepeer.fuzz.programs import arr, b, i, o, s
from fakepeer.oracle import expect_invoke


def _discover(*ops: dict) -> dict:
    return {"run_id": "run-1", "function_id": "conform.program", "mode": "discover",
            "input": o(ops=arr(list(ops))), "history": []}  # fmt: skip


def test_a_child_input_is_declared_as_the_sdk_encodes_it_again() -> None:
    # protocol §3.3 (D-TAGGED-UNKNOWN-MEMBERS): an unknown member of a tagged value is ignored,
    # so the declared input does not carry it (the oracle once copied the input verbatim)
    child = o(op=s("invoke"), id=s("a"), function=s("conform.echo"),
              input={"t": "str", "v": "v", "note": "ignored"})  # fmt: skip
    expected = expect_invoke(_discover(child), "r#1")
    assert expected.kind == "declared"
    assert expected.body["declaration"]["input"] == {"t": "str", "v": "v"}


def test_a_wait_refused_twice_is_refused_for_its_correlation() -> None:
    # D-ARGUMENT-ORDER: correlation before timeout (the oracle once left this open)
    wait = o(op=s("wait"), id=s("w"), event=s("order.approved"), correlation=o(order=i(1)),
             timeout=s("1S"))  # fmt: skip
    expected = expect_invoke(_discover(wait), "r#1")
    assert expected.kind == "failed"
    assert expected.body["error"]["category"] == "sdk.invalid_declaration"


def test_an_emission_refused_twice_is_one_category_whatever_the_order() -> None:
    emit = o(op=s("emit"), id=s("e"), event=s("order.shipped"), payload=s("text"),
             metadata=o(order=i(1)), attempts=i(2), catch=b(True), **{"as": s("x")})  # fmt: skip
    expected = expect_invoke(_discover(emit), "r#1")
    assert expected.kind == "completed"
    caught = expected.body["value"]["v"]["x"]["v"]["caught"]["v"]
    assert caught["category"] == s("sdk.invalid_declaration")
