"""The opt-in JSON convenience (docs/protocol.md §3.6): JSON documents to and from bytes only.

Strict both ways so every SDK agrees: canonical RFC 8785 output, and input that is exactly one
UTF-8 JSON text with no BOM, duplicate keys, NaN/Infinity literals or lone surrogates. Numbers
are IEEE-754 doubles (I-JSON): integers beyond 2^53 - 1 become the nearest double.
"""

from __future__ import annotations

import math
from typing import Any, Final

from fakepeer.protocol.canonical import CanonicalizationError, canonical_bytes
from fakepeer.protocol.frame_json import decode_json_payload

SDK_JSON: Final = "sdk.json"
#: Largest integer magnitude RFC 8785 / I-JSON carry exactly.
MAX_SAFE_INTEGER: Final = 2**53 - 1


class JsonConvenienceError(ValueError):
    """The JSON convenience refused its input (category `sdk.json`)."""

    category = SDK_JSON

    def __init__(self, reason: str) -> None:
        super().__init__(f"{SDK_JSON}: {reason}")
        self.reason = reason


def _prepare(doc: Any, path: str) -> Any:
    """Check `doc` is a JSON document and map integers beyond the safe range to their double."""
    if doc is None or isinstance(doc, bool | str):
        return doc
    if isinstance(doc, int):
        if abs(doc) <= MAX_SAFE_INTEGER:
            return doc
        try:
            as_double = float(doc)
        except OverflowError:
            raise JsonConvenienceError(f"integer at {path or '(root)'} exceeds a double") from None
        if int(as_double) != doc:
            raise JsonConvenienceError(
                f"integer {doc} at {path or '(root)'} has no exact IEEE-754 double"
            )
        return as_double
    if isinstance(doc, float):
        if not math.isfinite(doc):
            raise JsonConvenienceError(f"non-finite number {doc!r} at {path or '(root)'}")
        return doc
    if isinstance(doc, list):
        return [_prepare(item, f"{path}/{i}") for i, item in enumerate(doc)]
    if isinstance(doc, dict):
        result = {}
        for key, item in doc.items():
            if not isinstance(key, str):
                raise JsonConvenienceError(f"non-string key {key!r} at {path or '(root)'}")
            result[key] = _prepare(item, f"{path}/{key}")
        return result
    raise JsonConvenienceError(f"a {type(doc).__name__} at {path or '(root)'} is not JSON")


def json_to_bytes(doc: Any) -> bytes:
    """Serialize a JSON document as RFC 8785 canonical UTF-8 bytes; refuse anything not JSON.

    An integer beyond 2^53 - 1 is written as its double when that double is exact, and refused
    otherwise: the convenience never silently loses integer precision on the way out.
    """
    try:
        return canonical_bytes(_prepare(doc, ""))
    except RecursionError:
        raise JsonConvenienceError("document nested too deeply") from None
    except CanonicalizationError as exc:  # a lone surrogate cannot be encoded as UTF-8
        raise JsonConvenienceError(str(exc)) from None


def _to_doubles(doc: Any) -> Any:
    if isinstance(doc, bool) or doc is None or isinstance(doc, str):
        return doc
    if isinstance(doc, int):
        if abs(doc) <= MAX_SAFE_INTEGER:
            return doc
        try:
            return float(doc)
        except OverflowError:
            raise JsonConvenienceError("number literal beyond the double range") from None
    if isinstance(doc, float):
        if not math.isfinite(doc):
            raise JsonConvenienceError("number literal beyond the double range")
        return doc
    if isinstance(doc, list):
        return [_to_doubles(item) for item in doc]
    return {key: _to_doubles(item) for key, item in doc.items()}


def json_from_bytes(data: bytes) -> Any:
    """Parse bytes holding one strict UTF-8 JSON text into a Python JSON document."""
    if not isinstance(data, bytes | bytearray):
        raise JsonConvenienceError(f"expected bytes, got {type(data).__name__}")
    try:
        doc = decode_json_payload(bytes(data))
    except ValueError as exc:
        raise JsonConvenienceError(f"not a JSON text: {exc}") from None
    return _to_doubles(doc)
