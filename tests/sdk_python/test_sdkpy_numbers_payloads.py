"""The SDK's own number printer (§3.2), the emission payload conversion (§10.1) and the refusal of
error records the wire cannot carry (§5.1)."""

from __future__ import annotations

import math
import random
import struct

import pytest
from ryusen_sdk import ConversionError, InvalidDeclarationError, JsonDocument, RyusenError
from ryusen_sdk.errors import JsonConvenienceError
from ryusen_sdk.numbers import f64_text, number_text
from ryusen_sdk.payloads import event_payload_bytes

from fakepeer.protocol.values import format_f64

# Expected texts are what ECMAScript's Number::toString prints (checked against node).
TRICKY = [
    (5e-324, "5e-324"),  # the smallest subnormal
    (2.2250738585072014e-308, "2.2250738585072014e-308"),  # the smallest normal
    (2.225073858507201e-308, "2.225073858507201e-308"),  # the largest subnormal
    (1.7976931348623157e308, "1.7976931348623157e+308"),  # the largest finite
    (1e21, "1e+21"),  # the first exponent form above
    (999999999999999900000.0, "999999999999999900000"),  # the last plain form below 1e21
    (1e20, "100000000000000000000"),
    (1e-7, "1e-7"),  # the first exponent form below
    (1.5e-7, "1.5e-7"),
    (1e-6, "0.000001"),  # the last plain form
    (1.2345e-6, "0.0000012345"),
    (0.1 + 0.2, "0.30000000000000004"),  # 17 significant digits
    (9007199254740993.0, "9007199254740992"),  # 2^53 + 1 is not a double
    (123456789012345680000.0, "123456789012345680000"),
    (100.0, "100"),
    (-1.5, "-1.5"),
    (0.0, "0"),
]


@pytest.mark.parametrize(("value", "text"), TRICKY)
def test_number_text_is_ecmascript(value: float, text: str) -> None:
    assert number_text(value) == text


def test_f64_text_keeps_negative_zero_and_json_text_does_not() -> None:
    assert f64_text(-0.0) == "-0"
    assert number_text(-0.0) == "0"


def test_f64_text_agrees_with_the_bench_on_random_doubles() -> None:
    generator = random.Random(16)
    for _ in range(20_000):
        value = struct.unpack("<d", generator.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            assert f64_text(value) == format_f64(value)


def test_number_text_refuses_non_finite() -> None:
    with pytest.raises(ValueError):
        number_text(math.nan)


def test_event_payload_bytes_and_json_documents() -> None:
    assert event_payload_bytes(b"\x00\xff") == b"\x00\xff"
    document = {"z": 1, "é": [1.5, True, None, "x"], "a": {"k": 100.0}, "n": 1e21}
    assert event_payload_bytes(JsonDocument(document)) == (
        '{"z":1,"é":[1.5,true,null,"x"],"a":{"k":100},"n":1e+21}'.encode()
    )
    assert event_payload_bytes(JsonDocument("order-1")) == b'"order-1"'
    for not_bytes in ("text", {"a": 1}, None, 5):
        with pytest.raises(InvalidDeclarationError):
            event_payload_bytes(not_bytes)
    with pytest.raises(JsonConvenienceError):
        event_payload_bytes(JsonDocument({"a": math.inf}))
    with pytest.raises(JsonConvenienceError):
        event_payload_bytes(JsonDocument({1: "non-string key"}))


@pytest.mark.parametrize(
    "fields",
    [
        {"category": "Not Valid"},
        {"category": "app.x", "details": {"code": 51}},
        {"category": "app.x", "message": 5},
        {"category": "app.x", "retryable": "yes"},
    ],
)
def test_records_the_wire_cannot_carry_are_refused_with_sdk_conversion(fields: dict) -> None:
    with pytest.raises(ConversionError) as caught:
        RyusenError(**fields)
    assert caught.value.category == "sdk.conversion" and caught.value.retryable is False


def test_unknown_members_inside_values_are_ignored() -> None:
    from ryusen_sdk import from_tagged, to_tagged

    assert from_tagged({"t": "null", "v": None}) is None
    assert from_tagged({"t": "str", "v": "x", "unit": "ms"}) == "x"
    blob = from_tagged({"t": "blob", "v": {"sha256": "a" * 64, "size": "1", "name": "x"}})
    assert to_tagged(blob) == {"t": "blob", "v": {"sha256": "a" * 64, "size": "1"}}


def test_an_emitted_document_keeps_its_own_numbers() -> None:
    """§10.1 (D-EMIT-PAYLOAD): "a JSON document serializes as given": an int keeps every digit
    (no nearest-double rounding, which is the §3.6 convenience's), negative zero stays `-0`; only
    an integer beyond every finite double is not JSON (`sdk.json`)."""
    document = {"n": 2**53 + 1, "m": [2**64 + 1, -(2**63) - 1], "s": 2**53, "z": -0.0, "f": 1.5}
    assert event_payload_bytes(JsonDocument(document)) == (
        b'{"n":9007199254740993,"m":[18446744073709551617,-9223372036854775809],'
        b'"s":9007199254740992,"z":-0,"f":1.5}'
    )
    with pytest.raises(JsonConvenienceError):
        event_payload_bytes(JsonDocument([10**400]))
