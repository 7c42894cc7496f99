"""Strict JSON decoding for everything the bench reads from outside: SDK frames and fixtures.

Refused, as the protocol refuses them (docs/protocol.md §1-§3): a key twice in one object
(§3.3), the `NaN` / `Infinity` literals and number literals beyond the double range (JSON has
no non-finite numbers), and nesting deeper than MAX_JSON_NESTING. The depth is found by an
iterative scan of the text BEFORE parsing, so no parser and no recursive walk over the result
(comparison, validation, encoding) ever meets a document deep enough to exhaust Python's stack.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any

from fakepeer.protocol.limits import MAX_JSON_NESTING
from fakepeer.protocol.values import escape_pointer_token

_OPENERS = b"[{"
#: Every byte but the quote and the brackets: what the depth scan deletes first.
_NOT_SYNTAX = bytes(byte for byte in range(256) if byte not in b'"[]{}')
#: Bytes of quotes and brackets split at a time by the depth scan (bounds its lists).
_SCAN_PIECE = 1 << 20


class StrictJsonError(ValueError):
    """A text the bench refuses to decode; `pointer` locates the problem when it is known."""

    def __init__(self, message: str, pointer: str | None = None) -> None:
        super().__init__(message if pointer is None else f"{message} at {pointer or '(root)'}")
        self.message = message
        self.pointer = pointer


class _Overflow:
    """Stands in for a number literal that does not fit a double, until its pointer is known."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def nesting_depth(data: bytes | str, limit: int = MAX_JSON_NESTING) -> int:
    """The deepest nesting of objects and arrays in JSON text, stopping once past `limit`.

    Iterative and linear. Brackets inside strings do not count. When the text has no more
    opening brackets than `limit` the answer is settled by two counts, without a scan. The scan
    runs at C speed over bounded pieces: a 10 MB trace of 150,000 events once cost 9 s and
    220 MB here (a regular expression over every string, a list of every piece between them).
    """
    if isinstance(data, str):  # counted as given: text is encoded only for the scan below
        openers = data.count("[") + data.count("{")
    else:
        openers = data.count(b"[") + data.count(b"{")
    if openers <= limit:
        return openers
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if b"\\" in raw:  # an escaped quote or backslash is no string boundary
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    quotes_and_brackets = raw.translate(None, _NOT_SYNTAX)
    del raw
    depth = deepest = 0
    inside = False  # within a string at the start of the piece
    for start in range(0, len(quotes_and_brackets), _SCAN_PIECE):
        parts = quotes_and_brackets[start : start + _SCAN_PIECE].split(b'"')
        brackets = b"".join(parts[1 if inside else 0 :: 2])
        if len(parts) % 2 == 0:  # an odd number of quotes: the string state flips
            inside = not inside
        del parts
        for byte in brackets:
            if byte in _OPENERS:
                depth += 1
                if depth > deepest:
                    deepest = depth
                    if deepest > limit:
                        return deepest
            else:
                depth -= 1
    return deepest


def is_integer(value: Any) -> bool:
    """A JSON integer as `loads` parses one: written without a fraction or an exponent (`1.0`
    parses to a float, so it is no count: docs/protocol.md §2); never a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def loads(data: bytes | str, *, max_nesting: int = MAX_JSON_NESTING) -> Any:
    """Parse one JSON text strictly; StrictJsonError (a ValueError) says what was refused."""
    if nesting_depth(data, max_nesting) > max_nesting:
        raise StrictJsonError(f"JSON nested deeper than {max_nesting} levels")
    if not isinstance(data, str):  # as json.loads reads bytes
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    if data.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", data, 0)
    _local.overflowed = False
    try:
        document = _decoder().decode(data)
    except StrictJsonError:
        raise
    except RecursionError:  # unreachable below MAX_JSON_NESTING; kept as a last guard
        raise StrictJsonError(f"JSON nested deeper than {max_nesting} levels") from None
    if _local.overflowed:
        pointer, literal = _first_overflow(document)
        raise StrictJsonError(f"the number {literal} does not fit a double", pointer)
    return document


#: Per thread: the decoder (building one and its scanner costs about what parsing a small frame
#: does, so it is made once) and whether the current parse met a literal beyond the doubles.
_local = threading.local()


def _number(text: str) -> float | _Overflow:
    value = float(text)
    if math.isfinite(value):
        return value
    _local.overflowed = True
    return _Overflow(text)


def _decoder() -> json.JSONDecoder:
    decoder = getattr(_local, "decoder", None)
    if decoder is None:
        decoder = _local.decoder = json.JSONDecoder(
            object_pairs_hook=refuse_repeated_keys, parse_constant=refuse_constant,
            parse_float=_number,
        )  # fmt: skip
    return decoder


def refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` refusing a member that appears twice (§2: one meaning per name)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJsonError(f"the member {key!r} appears twice in one object")
            seen.add(key)
    return result


def refuse_constant(name: str) -> Any:
    """`parse_constant` refusing NaN, Infinity and -Infinity, which are not JSON."""
    raise StrictJsonError(f"{name} is not JSON (JSON numbers are finite)")


def _first_overflow(document: Any) -> tuple[str, str]:
    """The JSON pointer and text of the first overflowing literal (iterative walk)."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, _Overflow):
            return pointer, node.text
        if isinstance(node, dict):
            items = [(f"{pointer}/{escape_pointer_token(key)}", item) for key, item in node.items()]
        elif isinstance(node, list):
            items = [(f"{pointer}/{index}", item) for index, item in enumerate(node)]
        else:
            continue
        stack.extend(reversed(items))
    return "", "?"
