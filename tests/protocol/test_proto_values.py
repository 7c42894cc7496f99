"""Unit tests of the tagged value model (docs/protocol.md §3, §4.3)."""

from __future__ import annotations

import io
import json
import math

import pytest
from rfc8785 import _impl as jcs_impl

from fakepeer.protocol.canonical import canonical_bytes
from fakepeer.protocol.limits import MAX_DEPTH, MAX_VALUE_BYTES
from fakepeer.protocol.values import (
    TAGS,
    U64,
    BlobRef,
    ConversionError,
    Duration,
    Instant,
    canonical_value_size,
    format_f64,
    from_python,
    is_valid_value,
    parse_f64,
    plain_to_tagged,
    to_python,
    validate_value,
    value_depth,
)

SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

# The §3.1 examples, each with its Python value.
EXAMPLES = [
    ({"t": "null"}, None),
    ({"t": "bool", "v": True}, True),
    ({"t": "i64", "v": "-9223372036854775808"}, -(2**63)),
    ({"t": "u64", "v": "18446744073709551615"}, U64(2**64 - 1)),
    ({"t": "f64", "v": "1.5"}, 1.5),
    ({"t": "f64", "v": "-0"}, -0.0),
    ({"t": "f64", "v": "1e+21"}, 1e21),
    ({"t": "str", "v": "naïve ☃"}, "naïve ☃"),
    ({"t": "bytes", "v": "AP8="}, b"\x00\xff"),
    ({"t": "array", "v": [{"t": "i64", "v": "1"}, {"t": "null"}]}, [1, None]),
    ({"t": "object", "v": {"a": {"t": "null"}}}, {"a": None}),
    ({"t": "instant", "v": "1700000000000"}, Instant(1700000000000)),
    ({"t": "duration", "v": "1500"}, Duration(1500)),
    (
        {"t": "blob", "v": {"sha256": SHA, "size": "0", "media_type": "text/plain"}},
        BlobRef(SHA, 0, "text/plain"),
    ),
    ({"t": "blob", "v": {"sha256": SHA, "size": "12"}}, BlobRef(SHA, 12)),
]


def _refusal(doc: object, pointer: str = "") -> ConversionError:
    with pytest.raises(ConversionError) as info:
        validate_value(doc, pointer)
    return info.value


@pytest.mark.parametrize(("doc", "value"), EXAMPLES)
def test_examples_decode_and_encode_exactly(doc: dict, value: object) -> None:
    validate_value(doc)
    decoded = to_python(doc)
    assert type(decoded) is type(value)
    assert decoded == value
    assert canonical_bytes(from_python(decoded)) == canonical_bytes(doc)


def test_every_tag_has_an_example() -> None:
    assert {doc["t"] for doc, _ in EXAMPLES} == set(TAGS)


def test_negative_zero_and_integer_widths_are_kept_apart() -> None:
    assert math.copysign(1.0, to_python({"t": "f64", "v": "-0"})) == -1.0  # type: ignore[arg-type]
    assert from_python(-0.0) == {"t": "f64", "v": "-0"}
    assert from_python(0.0) == {"t": "f64", "v": "0"}
    assert from_python(1.0) == {"t": "f64", "v": "1"}
    assert from_python(1) == {"t": "i64", "v": "1"}
    assert from_python(U64(1)) == {"t": "u64", "v": "1"}
    assert type(to_python({"t": "u64", "v": "1"})) is U64
    assert type(to_python({"t": "i64", "v": "1"})) is int
    assert from_python(2**63) == {"t": "u64", "v": "9223372036854775808"}
    assert from_python(-(2**63)) == {"t": "i64", "v": "-9223372036854775808"}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (-1.5, "-1.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (123e-20, "1.23e-18"),
        (1.2345e-5, "0.000012345"),
        (123456789012345680000.0, "123456789012345680000"),
        (2.0**53, "9007199254740992"),
        (-0.0, "-0"),
        (0.0, "0"),
        (100.0, "100"),
        (1.5e300, "1.5e+300"),
    ],
)
def test_f64_text_is_ecmascript(value: float, text: str) -> None:
    assert format_f64(value) == text
    assert parse_f64(text) == value
    if value != 0:  # rfc8785 prints -0 as 0; §3.2 keeps it
        sink = io.BytesIO()
        jcs_impl._serialize_float(value, sink)
        assert sink.getvalue().decode() == text


@pytest.mark.parametrize(
    "text", ["1.0", "1.50", "01", "1E21", "+1", "NaN", "Infinity", "1e999", "-0.0", " 1", "1e21"]
)
def test_non_canonical_f64_text_is_refused(text: str) -> None:
    error = _refusal({"t": "f64", "v": text})
    assert (error.category, error.pointer) == ("protocol.invalid_value", "")


@pytest.mark.parametrize("tag", ["i64", "u64", "instant", "duration"])
@pytest.mark.parametrize("text", ["007", "+1", "-0", "1e3", " 1", "1 ", "", "1.0", "١", "0x1"])
def test_non_canonical_integer_text_is_refused(tag: str, text: str) -> None:
    assert _refusal({"t": tag, "v": text}, "/body/input").pointer == "/body/input"


@pytest.mark.parametrize(
    ("tag", "text"),
    [
        ("u64", "18446744073709551616"),
        ("u64", "-1"),
        ("i64", "9223372036854775808"),
        ("i64", "-9223372036854775809"),
        ("instant", "9223372036854775808"),
        ("duration", "-9223372036854775809"),
    ],
)
def test_integers_outside_their_domain_are_refused(tag: str, text: str) -> None:
    _refusal({"t": tag, "v": text})


@pytest.mark.parametrize(
    "doc",
    [
        {"t": "bool"},
        {"t": "bool", "v": "true"},
        {"t": "bool", "v": 1},
        {"t": "i64", "v": 1},
        {"t": "str", "v": 1},
        {"t": "str", "v": "\ud800"},
        {"t": "bytes", "v": "AP8"},
        {"t": "bytes", "v": "AP9="},
        {"t": "bytes", "v": "AP8=\n"},
        {"t": "bytes", "v": "AP-_"},
        {"t": "bytes", "v": "A P8="},
        {"t": "array", "v": {}},
        {"t": "object", "v": []},
        {"t": "object", "v": {"\udc00": {"t": "null"}}},
        {"t": "instant", "v": 5},
        {"t": "blob", "v": {"sha256": SHA.upper(), "size": "0"}},
        {"t": "blob", "v": {"sha256": SHA[:-1], "size": "0"}},
        {"t": "blob", "v": {"sha256": SHA, "size": 0}},
        {"t": "blob", "v": {"sha256": SHA, "size": "01"}},
        {"t": "blob", "v": {"sha256": SHA}},
        {"t": "blob", "v": {"sha256": SHA, "size": "0", "media_type": ""}},
        {"t": "blob", "v": "x"},
        {"t": "set", "v": []},
        {"t": 1, "v": "1"},
        {"v": "1"},
        {},
        [],
        "x",
        None,
    ],
)
def test_invalid_encodings_are_refused_at_the_value(doc: object) -> None:
    error = _refusal(doc, "/body/value")
    assert error.category == "protocol.invalid_value"
    assert error.pointer == "/body/value"
    assert "/body/value" in str(error)


def test_empty_bytes_and_containers_are_valid() -> None:
    for doc in (
        {"t": "bytes", "v": ""},
        {"t": "array", "v": []},
        {"t": "object", "v": {}},
        {"t": "str", "v": ""},
    ):
        validate_value(doc)
    assert to_python({"t": "bytes", "v": ""}) == b""


def test_pointer_is_the_innermost_invalid_value() -> None:
    doc = {"t": "array", "v": [{"t": "i64", "v": "x"}]}
    assert _refusal(doc, "/body/input").pointer == "/body/input/v/0"
    nested = {
        "t": "object",
        "v": {
            "a/b": {"t": "array", "v": [{"t": "null"}, {"t": "object", "v": {"~k": {"t": "x"}}}]}
        },
    }
    assert _refusal(nested).pointer == "/v/a~1b/v/1/v/~0k"
    assert _refusal({"t": "array", "v": [{"t": "null"}, 5]}).pointer == "/v/1"


def test_first_invalid_in_document_order_wins() -> None:
    doc = {"t": "array", "v": [{"t": "null"}, {"t": "i64", "v": "01"}, {"t": "u64", "v": "-1"}]}
    assert _refusal(doc).pointer == "/v/1"


def _nested(depth: int) -> dict:
    doc: dict = {"t": "null"}
    for _ in range(depth - 1):
        doc = {"t": "array", "v": [doc]}
    return doc


def test_depth_64_is_accepted_and_65_refused_at_the_deep_value() -> None:
    assert value_depth(_nested(MAX_DEPTH)) == MAX_DEPTH
    validate_value(_nested(MAX_DEPTH))
    error = _refusal(_nested(MAX_DEPTH + 1), "/body/input")
    assert error.category == "protocol.limit_exceeded"
    assert error.pointer == "/body/input" + "/v/0" * MAX_DEPTH
    assert value_depth({"t": "array", "v": []}) == 1
    assert value_depth({"t": "blob", "v": {"sha256": SHA, "size": "0"}}) == 1


def test_depth_limit_is_reported_before_an_earlier_invalid_value() -> None:
    doc = {"t": "array", "v": [{"t": "i64", "v": "x"}, _nested(MAX_DEPTH)]}
    error = _refusal(doc)
    assert error.category == "protocol.limit_exceeded"
    assert error.pointer == "/v/1" + "/v/0" * (MAX_DEPTH - 1)


def test_size_is_checked_before_depth() -> None:
    doc = _nested(MAX_DEPTH + 1)
    doc["v"].append({"t": "str", "v": "a" * MAX_VALUE_BYTES})
    error = _refusal(doc, "/body/input")
    assert (error.category, error.pointer) == ("protocol.limit_exceeded", "/body/input")


def test_size_limit_counts_the_canonical_encoding() -> None:
    overhead = len(b'{"t":"str","v":""}')
    fits = {"t": "str", "v": "a" * (MAX_VALUE_BYTES - overhead)}
    assert canonical_value_size(fits) == MAX_VALUE_BYTES == len(canonical_bytes(fits))
    validate_value(fits)
    too_big = {"t": "str", "v": "a" * (MAX_VALUE_BYTES - overhead + 1)}
    error = _refusal(too_big, "/body/value")
    assert (error.category, error.pointer) == ("protocol.limit_exceeded", "/body/value")
    escaped = {"t": "str", "v": "\x01" * (MAX_VALUE_BYTES // 6)}  # \u0001 is six bytes
    assert canonical_value_size(escaped) == len(canonical_bytes(escaped))
    with pytest.raises(ConversionError) as info:
        from_python("é" * (MAX_VALUE_BYTES // 2))
    assert info.value.category == "sdk.conversion"


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        {1: "a"},
        {("a",): 1},
        (1, 2),
        {1, 2},
        frozenset(),
        object(),
        lambda: 1,
        2**64,
        -(2**63) - 1,
        U64(-1),
        U64(2**64),
        "\ud800",
        {"\udfff": 1},
        Instant(2**63),
        Duration(1.5),  # type: ignore[arg-type]
        BlobRef("x", 0),
        BlobRef(SHA, -1),
        BlobRef(SHA, 0, ""),
        memoryview(b"x"),
        complex(1, 2),
    ],
)
def test_values_outside_the_model_are_refused(value: object) -> None:
    with pytest.raises(ConversionError) as info:
        from_python(value)
    assert info.value.category == "sdk.conversion"


def test_refusal_pointer_locates_the_python_value() -> None:
    with pytest.raises(ConversionError) as info:
        from_python({"a": [1, {"b": math.nan}]})
    assert info.value.pointer == "/v/a/v/1/v/b"


def test_from_python_refuses_depth_65() -> None:
    value: list = []
    for _ in range(MAX_DEPTH - 1):
        value = [value]
    from_python(value)
    with pytest.raises(ConversionError) as info:
        from_python([value])
    assert info.value.category == "sdk.conversion"
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ConversionError):
        from_python(cyclic)


def test_bytearray_is_bytes() -> None:
    assert from_python(bytearray(b"\x00")) == {"t": "bytes", "v": "AA=="}


def test_to_python_refuses_invalid_documents() -> None:
    with pytest.raises(ConversionError) as info:
        to_python({"t": "i64", "v": "1.0"})
    assert info.value.category == "protocol.invalid_value"
    assert not is_valid_value({"t": "i64", "v": "1.0"})
    assert is_valid_value({"t": "i64", "v": "1"})


def test_plain_notation() -> None:
    plain = {
        "s": "x",
        "i": 1,
        "f": 1.0,
        "e": 1e3,
        "b": True,
        "n": None,
        "l": [False, -2],
        "t": {"$tagged": {"t": "u64", "v": "007"}},
        "y": {"$bytes": "hé"},
    }
    assert plain_to_tagged(plain) == {
        "t": "object",
        "v": {
            "s": {"t": "str", "v": "x"},
            "i": {"t": "i64", "v": "1"},
            "f": {"t": "f64", "v": "1"},
            "e": {"t": "f64", "v": "1000"},
            "b": {"t": "bool", "v": True},
            "n": {"t": "null"},
            "l": {"t": "array", "v": [{"t": "bool", "v": False}, {"t": "i64", "v": "-2"}]},
            "t": {"t": "u64", "v": "007"},
            "y": {"t": "bytes", "v": "aMOp"},
        },
    }
    assert plain_to_tagged({"$tagged": {"t": "null"}, "other": 1})["t"] == "object"
    assert plain_to_tagged({"$x": 1, "$y": 2})["t"] == "object"


@pytest.mark.parametrize(
    "plain", [2**63, math.nan, (1,), {"$repeat": {"text": "a", "times": 2}}, {"$bytes": 1}, b"x"]
)
def test_plain_notation_refusals(plain: object) -> None:
    with pytest.raises(ConversionError):
        plain_to_tagged(plain)


def test_conversion_error_is_a_value_error_with_fields() -> None:
    error = ConversionError("protocol.invalid_value", "/a", "bad")
    assert isinstance(error, ValueError)
    assert (error.category, error.pointer, error.reason) == ("protocol.invalid_value", "/a", "bad")
    assert str(error) == 'protocol.invalid_value at JSON pointer "/a": bad'


def test_unknown_members_inside_values_are_ignored() -> None:
    """D-TAGGED-UNKNOWN-MEMBERS: RFD 2 ignores unknown fields, inside tagged values too."""
    for doc in (
        {"t": "null", "v": None},
        {"t": "str", "v": "a", "x": 1},
        {"t": "blob", "v": {"sha256": SHA, "size": "0", "extra": "x"}},
    ):
        validate_value(doc)


def test_ignored_members_do_not_count_toward_the_size_limit() -> None:
    """§3.3 ignores unknown members and the canonical encoding drops them, so §4.3's limit,
    a limit on the canonical encoding, does not count them (D-TAGGED-UNKNOWN-MEMBERS)."""
    overhead = len(b'{"t":"str","v":""}')
    letters = "a" * (MAX_VALUE_BYTES - overhead)
    padded = {"t": "str", "v": letters, "note": "ignored, not counted"}
    assert canonical_value_size(padded) == MAX_VALUE_BYTES
    validate_value(padded)
    nested = {
        "t": "array",
        "x": "ignored",
        "v": [
            {"t": "null", "v": "ignored"},
            {"t": "blob", "v": {"sha256": "0" * 64, "size": "0", "extra": "ignored"}},
            {"t": "str", "v": letters[:-120], "x": {"also": "ignored"}},
        ],
    }
    clean = {
        "t": "array",
        "v": [
            {"t": "null"},
            {"t": "blob", "v": {"sha256": "0" * 64, "size": "0"}},
            {"t": "str", "v": letters[:-120]},
        ],
    }
    assert len(json.dumps(nested, separators=(",", ":"))) > MAX_VALUE_BYTES  # as sent: over
    assert canonical_value_size(nested) == len(canonical_bytes(clean))
    over = {"t": "str", "v": letters + "a", "note": "ignored"}
    error = _refusal(over, "/body/input")
    assert error.category == "protocol.limit_exceeded"
    assert "1048577 bytes" in str(error)
