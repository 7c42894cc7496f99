"""§6 durations: grammar, exact arithmetic, rounding and the portable range."""

from __future__ import annotations

import math
from datetime import timedelta
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakepeer.protocol.durations import (
    DURATION_GRAMMAR,
    DurationError,
    duration_ms,
    exact_ms,
    parse_duration_ms,
    typed_duration_ms,
)

MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("200ms", 200),
        ("1.5s", 1500),
        ("2h30m", 9_000_000),
        ("1.1s", 1100),
        ("1ns", 1),
        ("1.0001ms", 2),
        ("0", 0),
        ("+0", 0),
        ("-0", 0),
        ("0s", 0),
        ("-0s", 0),
        ("0.000ms", 0),
        ("-5s", 0),
        ("-1ns", 0),
        ("+1s", 1000),
        (".5s", 500),
        ("1.s", 1000),
        ("1s1s", 2000),
        ("1m1h", 3_660_000),
        ("1us", 1),
        ("1000us", 1),
        ("1001us", 2),
        ("1\u00b5s", 1),
        ("1\u03bcs", 1),
        ("999999ns", 1),
        ("1000001ns", 2),
        ("1h", 3_600_000),
        ("9223372036854775807ms", MAX),
        ("9223372036854775806.5ms", MAX),
        ("-9223372036854775807ms", 0),
        ("0.1s0.2s", 300),
    ],
)
def test_valid_durations(text: str, count: int) -> None:
    assert DURATION_GRAMMAR.fullmatch(text)
    assert parse_duration_ms(text) == count
    assert duration_ms(text) == count


@pytest.mark.parametrize(
    "text",
    [
        "5",
        "",
        "1S",
        "1d",
        "1h-5m",
        "1h+5m",
        "--1s",
        "+-1s",
        " 1s",
        "1s ",
        "1 s",
        "s",
        ".s",
        "1.2.3s",
        "00",
        "0.0",
        "1e3s",
        "1MS",
        "1sec",
        "\u0661s",
        "1\u00b5",
        "1us\n",
        "+",
        "-",
        "0x",
        "1s0",
    ],
)
def test_malformed_durations_are_refused(text: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration_ms(text)
    assert info.value.category == "sdk.invalid_duration"


@pytest.mark.parametrize(
    "text",
    [
        "9223372036854775807.5ms",
        "9223372036854775808ms",
        "-9223372036854775808ms",
        "2562047788016h",
        "1" + "0" * 400 + "h",
    ],
)
def test_magnitudes_beyond_the_portable_range_are_refused(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration_ms(text)


def test_exact_arithmetic_not_binary_floats() -> None:
    assert exact_ms("1.1s") == Fraction(1100)
    assert exact_ms("0.1ms0.2ms") == Fraction(3, 10)
    assert parse_duration_ms("0.1ms0.2ms") == 1  # a float sum would be 0.30000000000000004


@pytest.mark.parametrize(
    ("value", "count"),
    [
        (1500, 1500),
        (0, 0),
        (-5, 0),
        (0.5, 1),
        (1.0, 1),
        (-0.0, 0),
        (-1.5, 0),
        (MAX, MAX),
        (-MAX, 0),
        (timedelta(seconds=1.5), 1500),
        (timedelta(microseconds=1), 1),
        (timedelta(microseconds=1001), 2),
        (timedelta(0), 0),
        (timedelta(seconds=-5), 0),
        (timedelta(days=2), 172_800_000),
        (timedelta.max, (999_999_999 * 86_400 + 86_399) * 1000 + 1000),
    ],
)
def test_typed_durations(value: int | float | timedelta, count: int) -> None:
    assert typed_duration_ms(value) == count
    assert duration_ms(value) == count


@pytest.mark.parametrize(
    "value", [math.nan, math.inf, -math.inf, 2**63, -(2**63), 1e19, True, "5", None, Fraction(1)]
)
def test_typed_refusals(value: object) -> None:
    with pytest.raises(DurationError):
        typed_duration_ms(value)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 999))
def test_decimal_seconds_are_exact(whole: int, millis: int) -> None:
    assert parse_duration_ms(f"{whole}.{millis:03d}s") == whole * 1000 + millis
    assert parse_duration_ms(f"-{whole}.{millis:03d}s") == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10**12))
def test_nanoseconds_round_up(ns: int) -> None:
    assert parse_duration_ms(f"{ns}ns") == -(-ns // 1_000_000)
