"""§3 tagged values: exact round trips, strict refusals with pointers, §4.3 limits."""

from __future__ import annotations

import math

import pytest
import rfc8785
from ryusen_sdk import U64, BlobRef, ConversionError, Duration, Instant, from_tagged, to_tagged
from ryusen_sdk.errors import ProtocolError
from ryusen_sdk.values import check_limits, float_text

VALID = [
    {"t": "null"},
    {"t": "bool", "v": True},
    {"t": "i64", "v": "-9223372036854775808"},
    {"t": "i64", "v": "9223372036854775807"},
    {"t": "i64", "v": "1"},
    {"t": "u64", "v": "1"},
    {"t": "u64", "v": "18446744073709551615"},
    {"t": "f64", "v": "1"},
    {"t": "f64", "v": "-0"},
    {"t": "f64", "v": "1e+21"},
    {"t": "f64", "v": "1e-7"},
    {"t": "f64", "v": "5e-324"},
    {"t": "f64", "v": "1.7976931348623157e+308"},
    {"t": "f64", "v": "0.1"},
    {"t": "str", "v": "naïve ☃ 𝄞"},
    {"t": "bytes", "v": "AP8="},
    {"t": "bytes", "v": ""},
    {"t": "array", "v": [{"t": "i64", "v": "1"}, {"t": "null"}]},
    {"t": "object", "v": {"a": {"t": "null"}, "": {"t": "u64", "v": "0"}}},
    {"t": "instant", "v": "1700000000000"},
    {"t": "duration", "v": "-1500"},
    {
        "t": "blob",
        "v": {
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "size": "0",
            "media_type": "text/plain",
        },
    },
]


@pytest.mark.parametrize("document", VALID)
def test_decode_then_encode_gives_back_the_same_canonical_bytes(document: dict) -> None:
    assert rfc8785.dumps(to_tagged(from_tagged(document))) == rfc8785.dumps(document)


def test_distinctions_are_kept() -> None:
    assert to_tagged(1) == {"t": "i64", "v": "1"}
    assert to_tagged(U64(1)) == {"t": "u64", "v": "1"}
    assert to_tagged(1.0) == {"t": "f64", "v": "1"}
    assert to_tagged(-0.0) == {"t": "f64", "v": "-0"}
    assert to_tagged(b"ab") == {"t": "bytes", "v": "YWI="}
    assert to_tagged("ab") == {"t": "str", "v": "ab"}
    assert to_tagged(Instant(5)) == {"t": "instant", "v": "5"}
    assert to_tagged(Duration(5)) == {"t": "duration", "v": "5"}
    assert isinstance(from_tagged({"t": "u64", "v": "3"}), U64)
    assert math.copysign(1, from_tagged({"t": "f64", "v": "-0"})) == -1
    blob = from_tagged(VALID[-1])
    assert blob == BlobRef(VALID[-1]["v"]["sha256"], 0, "text/plain")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (-1.5, "-1.5"),
        (1e20, "1" + "0" * 20),
    ],
)
def test_float_text_is_ecmascript(value: float, text: str) -> None:
    assert float_text(value) == text


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        {1: "x"},
        (1, 2),
        {1, 2},
        object(),
        lambda: 1,
        2**63,
        -(2**63) - 1,
        "\ud800",
        {"\ud800": 1},
    ],
)
def test_unportable_values_are_refused_not_coerced(value: object) -> None:
    with pytest.raises(ConversionError) as caught:
        to_tagged(value)
    assert caught.value.category == "sdk.conversion"
    assert caught.value.retryable is False


def test_encoding_limits_are_conversion_errors() -> None:
    deep: list = []
    for _ in range(63):
        deep = [deep]
    to_tagged(deep)  # depth 64 is accepted
    with pytest.raises(ConversionError):
        to_tagged([deep])
    with pytest.raises(ConversionError):
        to_tagged("x" * 1_048_576)


INVALID = [
    ({"t": "i64", "v": "007"}, ""),
    ({"t": "i64", "v": "+1"}, ""),
    ({"t": "i64", "v": "-0"}, ""),
    ({"t": "i64", "v": "1e3"}, ""),
    ({"t": "i64", "v": " 1"}, ""),
    ({"t": "i64", "v": 1}, ""),
    ({"t": "i64", "v": "9223372036854775808"}, ""),
    ({"t": "u64", "v": "18446744073709551616"}, ""),
    ({"t": "u64", "v": "-1"}, ""),
    ({"t": "f64", "v": "NaN"}, ""),
    ({"t": "f64", "v": "Infinity"}, ""),
    ({"t": "f64", "v": "1e999"}, ""),
    ({"t": "f64", "v": "1.0"}, ""),
    ({"t": "f64", "v": "1.50"}, ""),
    ({"t": "f64", "v": "01"}, ""),
    ({"t": "f64", "v": "1E21"}, ""),
    ({"t": "f64", "v": "+1"}, ""),
    ({"t": "f64", "v": "-0.0"}, ""),
    ({"t": "str", "v": "\ud800"}, ""),
    ({"t": "bytes", "v": "AP9="}, ""),
    ({"t": "bytes", "v": "AP8"}, ""),
    ({"t": "bytes", "v": "AP8=\n"}, ""),
    ({"t": "bytes", "v": "A-8="}, ""),
    ({"t": "bool"}, ""),
    ({"t": "wat", "v": 1}, ""),
    ({"v": 1}, ""),
    ("x", ""),
    ({"t": "array", "v": [{"t": "i64", "v": "x"}]}, "/v/0"),
    ({"t": "object", "v": {"a/b": {"t": "i64", "v": "x"}}}, "/v/a~1b"),
    ({"t": "object", "v": {"\ud800": {"t": "null"}}}, ""),
    ({"t": "array", "v": [5]}, "/v/0"),
    ({"t": "blob", "v": {"sha256": "E3B0", "size": "0"}}, ""),
    ({"t": "blob", "v": {"sha256": "0" * 64, "size": "0", "media_type": ""}}, ""),
    ({"t": "instant", "v": "1.5"}, ""),
]


@pytest.mark.parametrize(("document", "pointer"), INVALID)
def test_invalid_values_name_the_innermost_bad_value(document: object, pointer: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        from_tagged(document, "")
    assert caught.value.category == "protocol.invalid_value"
    assert caught.value.details == {"pointer": pointer}


def _nested(levels: int) -> dict:
    value: dict = {"t": "null"}
    for _ in range(levels - 1):
        value = {"t": "array", "v": [value]}
    return value


def test_depth_limit_names_the_first_value_at_level_65() -> None:
    check_limits(_nested(64), "/body/input")
    with pytest.raises(ProtocolError) as caught:
        check_limits(_nested(66), "/body/input")
    assert caught.value.category == "protocol.limit_exceeded"
    assert caught.value.details["pointer"] == "/body/input" + "/v/0" * 64


def test_size_limit_names_the_outermost_value() -> None:
    big = {"t": "array", "v": [{"t": "str", "v": "x" * 1_048_576}]}
    with pytest.raises(ProtocolError) as caught:
        check_limits(big, "/body/input")
    assert caught.value.details == {"pointer": "/body/input"}
