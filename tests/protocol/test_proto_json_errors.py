"""§3.6 JSON convenience and §5 error records."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakepeer.protocol import errors
from fakepeer.protocol.errors import ErrorRecord, ErrorRecordError, is_reserved
from fakepeer.protocol.json_convenience import (
    JsonConvenienceError,
    json_from_bytes,
    json_to_bytes,
)

# --------------------------------------------------------------------------- JSON convenience


def test_to_bytes_is_canonical() -> None:
    doc = {"b": [1, 2.5, 1.0, -0.0, None, True], "a": "é\n", "\u20ac": {}}
    assert json_to_bytes(doc) == '{"a":"é\\n","b":[1,2.5,1,0,null,true],"€":{}}'.encode()


@pytest.mark.parametrize(
    "doc", [math.nan, math.inf, {1: 2}, (1, 2), {1, 2}, b"x", object(), [math.inf], 2**53 + 1]
)
def test_to_bytes_refuses_non_json(doc: object) -> None:
    with pytest.raises(JsonConvenienceError) as info:
        json_to_bytes(doc)
    assert info.value.category == "sdk.json"


def test_to_bytes_lone_surrogate_is_refused() -> None:
    with pytest.raises(JsonConvenienceError):
        json_to_bytes("\ud800")


def test_large_integers_are_doubles() -> None:
    assert json_to_bytes(2**60) == b"1152921504606847000"  # ECMAScript text of the double
    assert json_from_bytes(b"9007199254740993") == 9007199254740992.0
    assert json_to_bytes(json_from_bytes(b"9007199254740993")) == b"9007199254740992"
    assert json_from_bytes(b"9007199254740991") == 9007199254740991


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b" ",
        b"NaN",
        b"[Infinity]",
        b"-Infinity",
        b'{"a":1,"a":2}',
        b'{"x":{"a":1,"a":1}}',
        b'"\\ud800"',
        b'{"\\udc00":1}',
        b"\xef\xbb\xbf{}",
        b"\xff",
        b'"\xed\xa0\x80"',
        b"{} {}",
        b"[1,]",
        b"'a'",
        b"1e400",
        b"-1e400",
        b'"\x01"',
        b"[" * 100_000,
    ],
)
def test_from_bytes_refusals(data: bytes) -> None:
    with pytest.raises(JsonConvenienceError) as info:
        json_from_bytes(data)
    assert info.value.category == "sdk.json"


def test_from_bytes_accepts_whitespace_and_surrogate_pairs() -> None:
    assert json_from_bytes(b' {"a": [1, "\\ud83d\\ude00"]}\n') == {"a": [1, "\U0001f600"]}
    assert json_from_bytes(bytearray(b"null")) is None


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(JSON)
def test_json_round_trip_is_stable(doc: object) -> None:
    data = json_to_bytes(doc)
    assert json_to_bytes(json_from_bytes(data)) == data


# --------------------------------------------------------------------------- error records


def test_error_record_round_trip() -> None:
    wire = {
        "category": "payments.card_declined",
        "message": "card declined",
        "retryable": False,
        "details": {"code": "51"},
        "cause": {"category": "io.timeout", "message": "gateway", "retryable": True, "details": {}},
        "unknown": "ignored",
    }
    record = ErrorRecord.from_json(wire)
    assert record.cause == ErrorRecord("io.timeout", "gateway", True)
    expected = dict(wire)
    del expected["unknown"]
    assert record.to_json() == expected
    assert "cause" not in ErrorRecord("a", "m", False).to_json()
    assert ErrorRecord("a", "m", False).to_json()["details"] == {}


@pytest.mark.parametrize(
    ("doc", "pointer"),
    [
        ([], ""),
        ({"message": "m", "retryable": False, "details": {}}, "/category"),
        ({"category": "Bad", "message": "m", "retryable": False, "details": {}}, "/category"),
        ({"category": "a..b", "message": "m", "retryable": False, "details": {}}, "/category"),
        ({"category": "a.", "message": "m", "retryable": False, "details": {}}, "/category"),
        ({"category": "1a", "message": "m", "retryable": False, "details": {}}, "/category"),
        ({"category": "a", "retryable": False, "details": {}}, "/message"),
        ({"category": "a", "message": "m", "retryable": 0, "details": {}}, "/retryable"),
        ({"category": "a", "message": "m", "retryable": False}, "/details"),
        ({"category": "a", "message": "m", "retryable": False, "details": {"k": 1}}, "/details/k"),
        (
            {"category": "a", "message": "m", "retryable": False, "details": {}, "cause": None},
            "/cause",
        ),
    ],
)
def test_error_record_refusals(doc: object, pointer: str) -> None:
    with pytest.raises(ErrorRecordError) as info:
        ErrorRecord.from_json(doc)
    assert info.value.pointer == pointer


def test_categories() -> None:
    assert errors.CATEGORY.fullmatch("a.b_2.c")
    assert errors.CATEGORY.fullmatch("app.unhandled")
    assert errors.CATEGORY.fullmatch("a.1")
    assert len(errors.RESERVED_CATEGORIES) == 15
    assert all(is_reserved(c) for c in errors.RESERVED_CATEGORIES)
    assert all(errors.CATEGORY.fullmatch(c) for c in errors.RESERVED_CATEGORIES)
    assert not is_reserved("payments.sdk")
    assert not is_reserved("sdkx.a")
    record = ErrorRecord.protocol("protocol.malformed", "/body", "bad")
    assert record.to_json() == {
        "category": "protocol.malformed",
        "message": "bad",
        "retryable": False,
        "details": {"pointer": "/body"},
    }
