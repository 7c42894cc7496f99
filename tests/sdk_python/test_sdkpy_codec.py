"""§2 decoding order and §9.1 invoke validation: categories and pointers of protocol errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ryusen_sdk.codec import FrameError, decode_envelope, decode_invoke
from ryusen_sdk.errors import ProtocolError

NULL = {"t": "null"}


def _invoke(**body: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "run_id": "r",
        "function_id": "conform.echo",
        "mode": "discover",
        "input": NULL,
        "history": [],
    }
    base.update(body)
    return {"version": "1.0", "kind": "invoke", "id": "x#1", "body": base}


def _decode(document: Any) -> Any:
    payload = document if isinstance(document, bytes) else json.dumps(document).encode()
    envelope = decode_envelope(payload)
    return decode_invoke(envelope, len(payload))


def _error(document: Any) -> tuple[str, str, str]:
    try:
        _decode(document)
    except FrameError as exc:
        return exc.error.category, exc.error.details["pointer"], exc.reply_id
    except ProtocolError as exc:
        return exc.category, exc.details["pointer"], "x#1"
    raise AssertionError("decoded")


GOOD_TARGET = {
    "run_id": "r",
    "step_id": "a",
    "phase": "forward",
    "attempt": 1,
    "operation_id": "op",
    "fencing_generation": "0",
}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (b"not json", ("protocol.malformed", "", "-")),
        (b'{"version":"1.0","id":"a","id":"b"}', ("protocol.malformed", "", "-")),
        (b'{"version":"1.0","kind":"invoke","id":"q","body":NaN}', ("protocol.malformed", "", "-")),
        (b"\xef\xbb\xbf{}", ("protocol.malformed", "", "-")),
        ([], ("protocol.malformed", "", "-")),
        ({"kind": "invoke", "id": "q", "body": {}}, ("protocol.malformed", "/version", "q")),
        (
            {"version": "1.00", "kind": "invoke", "id": "q", "body": {}},
            ("protocol.malformed", "/version", "q"),
        ),
        (
            {"version": "1.0", "kind": 3, "id": "q", "body": {}},
            ("protocol.malformed", "/kind", "q"),
        ),
        (
            {"version": "1.0", "kind": "invoke", "id": "", "body": {}},
            ("protocol.malformed", "/id", "-"),
        ),
        (
            {"version": "1.0", "kind": "invoke", "id": "q" * 257, "body": {}},
            ("protocol.malformed", "/id", "-"),
        ),
        (
            {"version": "1.0", "kind": "invoke", "id": 7, "body": {}},
            ("protocol.malformed", "/id", "-"),
        ),
        (
            {"version": "1.0", "kind": "invoke", "id": "q", "body": []},
            ("protocol.malformed", "/body", "q"),
        ),
        (
            {"version": "2.0", "kind": "invoke", "id": "q", "body": {}},
            ("protocol.unsupported_version", "/version", "q"),
        ),
        (
            {"version": "1.0", "kind": "wat", "id": "q", "body": {}},
            ("protocol.unknown_variant", "/kind", "q"),
        ),
        (
            {"version": "1.0", "kind": "declared", "id": "q", "body": {}},
            ("protocol.unknown_variant", "/kind", "q"),
        ),
        (_invoke(run_id=""), ("protocol.malformed", "/body/run_id", "x#1")),
        (_invoke(mode="replay"), ("protocol.unknown_variant", "/body/mode", "x#1")),
        (_invoke(history={}), ("protocol.malformed", "/body/history", "x#1")),
        (
            _invoke(history=[{"step_id": "a", "status": "skipped"}]),
            ("protocol.unknown_variant", "/body/history/0/status", "x#1"),
        ),
        (
            _invoke(history=[{"step_id": "a", "status": "completed", "value": NULL}] * 2),
            ("protocol.malformed", "/body/history/1/step_id", "x#1"),
        ),
        (
            _invoke(
                history=[
                    {
                        "step_id": "a",
                        "status": "failed",
                        "error": {"category": "x", "message": "m", "retryable": 1, "details": {}},
                    }
                ]
            ),
            ("protocol.malformed", "/body/history/0/error/retryable", "x#1"),
        ),
        (_invoke(mode="forward"), ("protocol.malformed", "/body/target", "x#1")),
        (
            _invoke(mode="forward", target=GOOD_TARGET | {"phase": "compensation"}),
            ("protocol.malformed", "/body/target/phase", "x#1"),
        ),
        (
            _invoke(mode="forward", target=GOOD_TARGET | {"phase": "sideways"}),
            ("protocol.unknown_variant", "/body/target/phase", "x#1"),
        ),
        (
            _invoke(mode="forward", target=GOOD_TARGET | {"run_id": "other"}),
            ("protocol.malformed", "/body/target/run_id", "x#1"),
        ),
        (
            _invoke(mode="forward", target=GOOD_TARGET | {"attempt": 0}),
            ("protocol.malformed", "/body/target/attempt", "x#1"),
        ),
        (
            _invoke(mode="forward", target=GOOD_TARGET | {"fencing_generation": "01"}),
            ("protocol.malformed", "/body/target/fencing_generation", "x#1"),
        ),
        (
            _invoke(
                history=[
                    {"step_id": str(i), "status": "completed", "value": NULL} for i in range(1025)
                ]
            ),
            ("protocol.limit_exceeded", "/body/history", "x#1"),
        ),
        (
            _invoke(input={"t": "array", "v": [{"t": "i64", "v": "x"}]}),
            ("protocol.invalid_value", "/body/input/v/0", "x#1"),
        ),
        (
            _invoke(
                history=[{"step_id": "a", "status": "completed", "value": {"t": "u64", "v": "-1"}}]
            ),
            ("protocol.invalid_value", "/body/history/0/value", "x#1"),
        ),
    ],
)
def test_protocol_errors(document: Any, expected: tuple[str, str, str]) -> None:
    assert _error(document) == expected


def test_unknown_members_are_ignored_and_target_ignored_in_discovery() -> None:
    document = _invoke(extra=1, target={"junk": True})
    document["future"] = {"x": 1}
    request = _decode(document)
    assert request.target is None
    assert request.input is None


def test_request_over_4_mib_is_limit_exceeded() -> None:
    big = {"t": "str", "v": "x" * 4_200_000}
    assert _error(_invoke(input=big)) == ("protocol.limit_exceeded", "", "x#1")


def test_accepts_any_minor() -> None:
    document = _invoke()
    document["version"] = "1.9"
    assert _decode(document).run_id == "r"


DEEP = NULL
for _ in range(64):
    DEEP = {"t": "array", "v": [DEEP]}


@pytest.mark.parametrize(
    "value",
    [
        NULL,
        {"t": "str", "v": "é"},
        {"t": "str", "v": "\ud800"},
        {"t": "i64", "v": "-0"},
        {"t": "i64", "v": "9223372036854775808"},
        {"t": "u64", "v": "18446744073709551615"},
        {"t": "f64", "v": "1.5"},
        {"t": "f64", "v": "1.50"},
        {"t": "bytes", "v": "YQ=="},
        {"t": "bytes", "v": "YQ"},
        {"t": "object", "v": {"a": {"t": "bool", "v": True}, "\udc00": NULL}},
        {"t": "object", "v": []},
        {"t": "array", "v": [NULL, {"t": "nope"}]},
        {"t": "array", "v": {}},
        {"t": "str"},
        {"t": "duration", "v": "5"},
        DEEP,
        {"t": "array", "v": [DEEP]},
        [],
    ],
)
def test_the_quick_decoder_agrees_with_the_careful_path(value: Any) -> None:
    """`decode_quickly` (no pointers) either gives what `from_tagged` gives for a value within
    the depth limit, or refuses: then the careful path decides, with the pointer (§2 order)."""
    from ryusen_sdk.values import Refused, check_limits, decode_quickly, from_tagged

    try:
        careful: Any = ("ok", check_limits(value, "", False), from_tagged(value))
    except ProtocolError as error:
        careful = ("refused", error.category)
    try:
        quick: Any = ("ok", None, decode_quickly(value))
    except Refused:
        quick = None
    if quick is not None:
        assert quick == careful
    history = [{"step_id": "a", "status": "completed", "value": value}]
    expected = _error(_invoke(input=value)) if careful[0] == "refused" else None
    if expected is not None:
        assert expected[1].startswith("/body/input")
        assert _error(_invoke(history=history))[1].startswith("/body/history/0/value")
    else:
        assert _decode(_invoke(input=value, history=history)).input == careful[2]
