"""ECMAScript number text (protocol §3.2): the f64 canonical text and JSON numbers (§10.1).

Why here and not a library: RFC 8785 libraries keep this printer private, and the protocol
document spells the algorithm out (§3.2) so an SDK without dependencies can write it. Python's
`repr` of a float gives the shortest digits that round-trip (correctly rounded); this module
lays them out by ECMAScript's Number::toString rules.
"""

from __future__ import annotations

import math


def shortest_digits(value: float) -> tuple[str, int]:
    """(s, n) for a finite positive double: digits s (no leading/trailing zeros) and the decimal
    exponent n such that value = 0.s × 10^n, with s as short as round-tripping allows."""
    text = repr(value)
    mantissa, _, exp_text = text.partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    n = len(int_part) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    return stripped.rstrip("0"), n


def number_text(value: float) -> str:
    """ECMAScript `Number::toString(value)`: `0` for either zero, `1e+21`, `1e-7`, `0.000001`."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no ECMAScript number text here (not finite)")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + number_text(-value)
    digits, n = shortest_digits(value)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{sign}{abs(exponent)}"


def f64_text(value: float) -> str:
    """The canonical `f64` payload text (§3.2): `number_text`, except negative zero is `-0`."""
    if value == 0 and math.copysign(1.0, value) < 0:
        return "-0"
    return number_text(value)
