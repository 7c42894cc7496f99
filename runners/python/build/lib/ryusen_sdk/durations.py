"""§6 durations: author-facing durations to the wire's millisecond count, exactly.

Arithmetic is rational (`Fraction`), never binary floating point, so `1.1s` is exactly 1100 ms.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

from .errors import InvalidDurationError

PORTABLE_MAX_MS = 2**63 - 1

_UNITS: dict[str, Fraction] = {
    "ns": Fraction(1, 1_000_000),
    "us": Fraction(1, 1_000),
    "\u00b5s": Fraction(1, 1_000),
    "\u03bcs": Fraction(1, 1_000),
    "ms": Fraction(1),
    "s": Fraction(1_000),
    "m": Fraction(60_000),
    "h": Fraction(3_600_000),
}
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_UNIT = "(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)"
_COMPONENT = re.compile(f"({_NUMBER})({_UNIT})")
_WHOLE = re.compile(f"[+-]?(?:0|(?:{_NUMBER}{_UNIT})+)")

DurationLike = str | timedelta | int | float | Fraction


def parse_exact(text: str) -> Fraction:
    """Parse the §6.1 grammar into an exact signed number of milliseconds."""
    if not isinstance(text, str) or not _WHOLE.fullmatch(text):
        raise InvalidDurationError(f"malformed duration {text!r}")
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return Fraction(0)
    total = Fraction(0)
    for number, unit in _COMPONENT.findall(body):
        total += _decimal(number) * _UNITS[unit]
    return sign * total


def _decimal(number: str) -> Fraction:
    # Decimal parses any digit count exactly (int() caps digit strings at 4300 digits).
    return Fraction(Decimal(number + "0" if number.endswith(".") else number))


def exact_millis(duration: DurationLike) -> Fraction:
    """The exact signed millisecond amount of a human-readable or typed duration."""
    if isinstance(duration, str):
        return parse_exact(duration)
    if isinstance(duration, timedelta):
        micros = (duration.days * 86_400 + duration.seconds) * 1_000_000 + duration.microseconds
        return Fraction(micros, 1_000)
    if isinstance(duration, bool):
        raise InvalidDurationError("a boolean is not a duration")
    if isinstance(duration, int | Fraction):
        return Fraction(duration)
    if isinstance(duration, float):
        if not math.isfinite(duration):
            raise InvalidDurationError(f"{duration!r} is not a finite duration")
        return Fraction(duration)
    raise InvalidDurationError(f"a {type(duration).__name__} is not a duration")


def to_wire_millis(duration: DurationLike) -> int:
    """§6.2: refuse past the portable range, round a positive amount up, clamp negatives to 0.

    A string is the human-readable form; `timedelta` is the typed form; a bare number is a typed
    count of milliseconds (the form the conformance program uses).
    """
    exact = exact_millis(duration)
    if abs(exact) > PORTABLE_MAX_MS:
        raise InvalidDurationError("the duration is past the portable range of 2^63-1 ms")
    if exact <= 0:
        return 0
    return math.ceil(exact)
