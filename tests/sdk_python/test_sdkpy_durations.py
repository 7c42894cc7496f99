"""§6 durations: exact arithmetic, ceiling, zero for non-positive, refusals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from ryusen_sdk import InvalidDurationError, to_wire_millis


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("1.1s", 1100),
        ("4.03s", 4030),
        ("1ns", 1),
        ("1.0001ms", 2),
        ("1.5s", 1500),
        ("0", 0),
        ("+0", 0),
        ("0s", 0),
        ("-0s", 0),
        ("0.000ms", 0),
        ("-5s", 0),
        ("1s1s", 2000),
        ("2h30m", 9_000_000),
        ("200ms", 200),
        (".5s", 500),
        ("1.s", 1000),
        ("1\u00b5s", 1),
        ("1\u03bcs", 1),
        ("1100000000ns", 1100),
        ("9223372036854775807ms", 9223372036854775807),
        ("-9223372036854775807ms", 0),
    ],
)
def test_human_durations(text: str, millis: int) -> None:
    assert to_wire_millis(text) == millis


@pytest.mark.parametrize(
    "text",
    [
        "",
        "5",
        "1S",
        "1h-5m",
        "1d",
        " 1s",
        "1s ",
        "00",
        "0.0",
        "-",
        "1e3s",
        "9223372036854775808ms",
        "-9223372036854775808ms",
        "++1s",
        "1.2.3s",
        "s",
        "１s",
    ],
)
def test_malformed_or_out_of_range_is_refused(text: str) -> None:
    with pytest.raises(InvalidDurationError) as caught:
        to_wire_millis(text)
    assert caught.value.category == "sdk.invalid_duration"
    assert caught.value.details == {}


def test_typed_forms() -> None:
    assert to_wire_millis(timedelta(microseconds=1)) == 1
    assert to_wire_millis(timedelta(seconds=-3)) == 0
    assert to_wire_millis(timedelta(hours=1)) == 3_600_000
    assert to_wire_millis(1500) == 1500
    assert to_wire_millis(2**63 - 1) == 2**63 - 1
    for bad in (2**63, float("nan"), float("inf"), True, None, [1]):
        with pytest.raises(InvalidDurationError):
            to_wire_millis(bad)  # type: ignore[arg-type]
