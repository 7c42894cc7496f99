"""§3.6 the JSON convenience: RFC 8785 out, strict JSON in, `sdk.json` refusals."""

from __future__ import annotations

import pytest
from ryusen_sdk import JsonConvenienceError, json_from_bytes, json_to_bytes


def test_round_trip_is_canonical() -> None:
    text = b'{"b": 1, "a": [1.0, 2.5e3, 1e21, "\\u00e9"]}'
    assert json_to_bytes(json_from_bytes(text)) == '{"a":[1,2500,1e+21,"é"],"b":1}'.encode()


def test_big_integers_become_doubles() -> None:
    assert json_to_bytes(json_from_bytes(b"9007199254740993")) == b"9007199254740992"


@pytest.mark.parametrize(
    "data",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b"1e400",
        b'{"a":1,"a":2}',
        b'"\\ud800"',
        b"\xef\xbb\xbf1",
        b"",
        b"[1,]",
        b"\xff",
        b"1 2",
        b"'a'",
    ],
)
def test_from_bytes_refusals(data: bytes) -> None:
    with pytest.raises(JsonConvenienceError) as caught:
        json_from_bytes(data)
    assert caught.value.category == "sdk.json"


@pytest.mark.parametrize("document", [float("nan"), {1: 2}, b"x", object(), (1,)])
def test_to_bytes_refusals(document: object) -> None:
    with pytest.raises(JsonConvenienceError):
        json_to_bytes(document)
