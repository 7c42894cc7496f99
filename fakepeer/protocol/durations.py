"""Author-facing durations to wire millisecond counts (docs/protocol.md §6), exactly.

Arithmetic is rational (`Fraction`), never binary floating point: `1.1s` is exactly 1100 ms and a
float would round it up to 1101. Positive values round up, zero stays zero, negatives become 0;
malformed text and magnitudes beyond 2^63 - 1 ms are refused with `sdk.invalid_duration`.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Final

from fakepeer.protocol.limits import I64_MAX

INVALID_DURATION: Final = "sdk.invalid_duration"

#: Milliseconds per unit (§6.1). `µs` is U+00B5 MICRO SIGN, `μs` U+03BC GREEK SMALL LETTER MU.
UNIT_MS: Final[dict[str, Fraction]] = {
    "ns": Fraction(1, 1_000_000),
    "us": Fraction(1, 1000),
    "\u00b5s": Fraction(1, 1000),
    "\u03bcs": Fraction(1, 1000),
    "ms": Fraction(1),
    "s": Fraction(1000),
    "m": Fraction(60_000),
    "h": Fraction(3_600_000),
}

_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_UNIT = r"(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)"
#: The whole §6.1 grammar; use with `fullmatch`.
DURATION_GRAMMAR: Final = re.compile(rf"[+-]?(?:0|(?:{_NUMBER}{_UNIT})+)")
_COMPONENT: Final = re.compile(rf"({_NUMBER})({_UNIT})")


class DurationError(ValueError):
    """A malformed or out-of-range duration (category `sdk.invalid_duration`)."""

    category = INVALID_DURATION

    def __init__(self, reason: str) -> None:
        super().__init__(f"{INVALID_DURATION}: {reason}")
        self.reason = reason


def exact_ms(text: str) -> Fraction:
    """The exact signed number of milliseconds a §6.1 duration string denotes."""
    if not isinstance(text, str) or not DURATION_GRAMMAR.fullmatch(text):
        shown = text[:40] + "..." if isinstance(text, str) and len(text) > 40 else text
        raise DurationError(f"malformed duration {shown!r}")
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in ("+", "-") else text
    if body == "0":
        return Fraction(0)
    total = sum(
        (Fraction(Decimal(number)) * UNIT_MS[unit] for number, unit in _COMPONENT.findall(body)),
        Fraction(0),
    )
    return sign * total


def wire_count(exact: Fraction) -> int:
    """§6.2 steps 2-3: refuse beyond the portable range, ceil positives, 0 for zero/negatives."""
    if abs(exact) > I64_MAX:
        raise DurationError("magnitude is beyond the portable range of 2^63 - 1 ms")
    return math.ceil(exact) if exact > 0 else 0


def parse_duration_ms(text: str) -> int:
    """Convert a human-readable duration (`200ms`, `1.5s`, `2h30m`) to the wire count."""
    return wire_count(exact_ms(text))


def typed_duration_ms(value: int | float | timedelta) -> int:
    """Convert the typed numeric form (ms as int/float, or a `timedelta`) to the wire count."""
    if isinstance(value, timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        return wire_count(Fraction(micros, 1000))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DurationError(f"a {type(value).__name__} is not a typed duration")
    if isinstance(value, float) and not math.isfinite(value):
        raise DurationError(f"typed duration {value!r} is not a finite number")
    return wire_count(Fraction(value))


def duration_ms(value: str | int | float | timedelta) -> int:
    """Either form: a string is parsed (§6.1), anything else is a typed duration."""
    if isinstance(value, str):
        return parse_duration_ms(value)
    return typed_duration_ms(value)
