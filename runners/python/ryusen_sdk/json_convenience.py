"""§3.6 the opt-in JSON convenience: a JSON document to or from the `bytes` variant only.

`to_bytes` writes RFC 8785 canonical JSON; `from_bytes` reads one strict UTF-8 JSON text with
I-JSON numbers. Refusals are `sdk.json`. It is never applied implicitly to any value.
"""

from __future__ import annotations

import math
from typing import Any

import rfc8785

from .errors import JsonConvenienceError
from .jsontext import JsonTextError, has_lone_surrogate, parse

_SAFE_INT = 2**53


def _parse_int(text: str) -> int | float:
    digits = text.lstrip("-")
    if len(digits) > 15:
        # I-JSON: numbers are doubles; an integer beyond 2^53 becomes the nearest double.
        number = float(text)
        if not math.isfinite(number):
            raise JsonConvenienceError(f"{text[:20]}... is not a finite double")
        if abs(number) >= _SAFE_INT:
            return number
    return int(text)


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise JsonConvenienceError(f"{text} is not a finite double")
    return number


def from_bytes(data: bytes) -> Any:
    """Parse one strict JSON text (no BOM, no repeated keys, no lone surrogates, no NaN)."""
    if not isinstance(data, bytes | bytearray):
        raise JsonConvenienceError("the JSON convenience reads bytes")
    try:
        document = parse(bytes(data), parse_int=_parse_int, parse_float=_parse_float)
    except JsonTextError as exc:
        raise JsonConvenienceError(f"not one JSON text: {exc}") from None
    _check_parsed(document)
    return document


def _check_parsed(node: Any) -> None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and has_lone_surrogate(item):
            raise JsonConvenienceError("a string contains a lone surrogate escape")
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def to_bytes(document: Any) -> bytes:
    """Serialize a JSON document (dict/list/str/int/float/bool/None) as RFC 8785 bytes."""
    return rfc8785.dumps(checked_document(document))


def checked_document(document: Any) -> Any:
    """The document with integers beyond 2^53 as their nearest doubles (§3.6, §10.1); anything
    not JSON (a non-finite number, an integer beyond the doubles) is `sdk.json`."""
    return _check_document(document, 0)


def _check_document(node: Any, depth: int) -> Any:
    if depth > 1000:
        raise JsonConvenienceError("the document is nested too deeply")
    if node is None or isinstance(node, bool):
        return node
    if type(node) is int:
        if abs(node) > _SAFE_INT:  # JSON numbers are doubles (I-JSON): the nearest one
            try:
                return float(node)  # correctly rounded, ties to even
            except OverflowError:
                raise JsonConvenienceError(f"{node} is beyond every finite double") from None
        return node
    if type(node) is float:
        if not math.isfinite(node):
            raise JsonConvenienceError(f"{node!r} is not a finite number")
        return node
    if type(node) is str:
        if has_lone_surrogate(node):
            raise JsonConvenienceError("a string contains a lone surrogate")
        return node
    if type(node) is list:
        return [_check_document(item, depth + 1) for item in node]
    if type(node) is dict:
        result = {}
        for key, value in node.items():
            if type(key) is not str or has_lone_surrogate(key):
                raise JsonConvenienceError(f"object key {key!r} is not a string")
            result[key] = _check_document(value, depth + 1)
        return result
    raise JsonConvenienceError(f"a {type(node).__name__} is not JSON")
