"""The §3 tagged value model: exact conversion between Python values and the wire, both ways.

Python values map as: None ↔ null, bool ↔ bool, int ↔ i64, `U64` ↔ u64, float ↔ f64, str ↔ str,
bytes ↔ bytes, list ↔ array, dict (str keys) ↔ object, `Instant`, `Duration`, `BlobRef`.
Anything else is refused with `sdk.conversion`, never coerced (§3.5).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass
from typing import Any

import rfc8785

from .errors import ConversionError, ProtocolError
from .jsontext import has_lone_surrogate, pointer_join
from .numbers import f64_text

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
U64_MAX = 2**64 - 1
MAX_DEPTH = 64
MAX_VALUE_BYTES = 1_048_576

_INT_TEXT = re.compile(r"0|-?[1-9][0-9]*")
_F64_TEXT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_BASE64_TEXT = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_SHA256_TEXT = re.compile(r"[0-9a-f]{64}")
_TAGS = frozenset(
    {
        "null",
        "bool",
        "i64",
        "u64",
        "f64",
        "str",
        "bytes",
        "array",
        "object",
        "instant",
        "duration",
        "blob",
    }
)


class U64(int):
    """An unsigned 64-bit integer: kept apart from `int` (i64) even for small numbers (§3.5)."""

    def __new__(cls, value: int) -> U64:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
            raise ConversionError(f"{value!r} is not an unsigned 64-bit integer")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"U64({int(self)})"


def _check_i64(ms: object, what: str) -> int:
    if isinstance(ms, bool) or not isinstance(ms, int) or not I64_MIN <= ms <= I64_MAX:
        raise ConversionError(f"{what} must be a signed 64-bit integer of milliseconds")
    return int(ms)


@dataclass(frozen=True)
class Instant:
    """A point in time: signed milliseconds since the Unix epoch (tag `instant`)."""

    ms: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "ms", _check_i64(self.ms, "an instant"))


@dataclass(frozen=True)
class Duration:
    """A stored duration value: a signed millisecond count, never rounded (tag `duration`)."""

    ms: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "ms", _check_i64(self.ms, "a duration"))


@dataclass(frozen=True)
class BlobRef:
    """A reference to content stored elsewhere (tag `blob`)."""

    sha256: str
    size: int
    media_type: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.sha256, str) or not _SHA256_TEXT.fullmatch(self.sha256):
            raise ConversionError("a blob sha256 is 64 lowercase hex digits")
        if isinstance(self.size, bool) or not isinstance(self.size, int):
            raise ConversionError("a blob size is an unsigned 64-bit integer")
        if not 0 <= self.size <= U64_MAX:
            raise ConversionError("a blob size is an unsigned 64-bit integer")
        if self.media_type is not None and (
            not isinstance(self.media_type, str)
            or self.media_type == ""
            or has_lone_surrogate(self.media_type)
        ):
            raise ConversionError("a blob media type is a non-empty string")


float_text = f64_text  # ECMAScript Number::toString text, `-0` for negative zero (§3.2)


# --- Python -> tagged -------------------------------------------------------------------------


def to_tagged(value: object) -> dict[str, Any]:
    """Encode a Python value as a tagged value document, refusing what the model cannot carry.

    Depth and size limits (§4.3) apply: over a limit is `sdk.conversion` too.
    """
    document = _encode(value, 1)
    if canonical_size(document) > MAX_VALUE_BYTES:
        raise ConversionError("the value's canonical encoding is larger than 1 MiB")
    return document


def _encode(value: object, depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ConversionError("the value is nested deeper than 64 levels")
    if value is None:
        return {"t": "null"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, U64):
        return {"t": "u64", "v": str(int(value))}
    if type(value) is int:
        if not I64_MIN <= value <= I64_MAX:
            raise ConversionError(f"{value} is outside the signed 64-bit range (use U64?)")
        return {"t": "i64", "v": str(value)}
    if type(value) is float:
        if not math.isfinite(value):
            raise ConversionError(f"{value!r} is not a finite float")
        return {"t": "f64", "v": float_text(value)}
    if type(value) is str:
        if has_lone_surrogate(value):
            raise ConversionError("the string contains a lone surrogate")
        return {"t": "str", "v": value}
    if type(value) in (bytes, bytearray):
        return {"t": "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}  # type: ignore[arg-type]
    if type(value) is list:
        return {"t": "array", "v": [_encode(item, depth + 1) for item in value]}
    if type(value) is dict:
        members: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise ConversionError(f"object key {key!r} is not a string")
            if has_lone_surrogate(key):
                raise ConversionError("an object key contains a lone surrogate")
            members[key] = _encode(item, depth + 1)
        return {"t": "object", "v": members}
    if isinstance(value, Instant):
        return {"t": "instant", "v": str(value.ms)}
    if isinstance(value, Duration):
        return {"t": "duration", "v": str(value.ms)}
    if isinstance(value, BlobRef):
        blob: dict[str, Any] = {"sha256": value.sha256, "size": str(value.size)}
        if value.media_type is not None:
            blob["media_type"] = value.media_type
        return {"t": "blob", "v": blob}
    raise ConversionError(f"a {type(value).__name__} cannot be carried by the tagged value model")


def canonical_size(document: object) -> int:
    """Length in bytes of a tagged value's RFC 8785 encoding (with a fallback for junk).

    Unknown members are ignored (§3.3) and the canonical encoding does not carry them, so they do
    not count toward the §4.3 limit: measured again without them only when over the limit.
    """
    size = _json_size(document)
    if size > MAX_VALUE_BYTES:
        size = _json_size(_known_members(document))
    return size


def _json_size(document: object) -> int:
    try:
        return len(rfc8785.dumps(document))  # type: ignore[arg-type]
    except Exception:
        import json

        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        return len(text.encode("utf-8", "surrogatepass"))


_BLOB_MEMBERS = ("sha256", "size", "media_type")


def _known_members(document: object) -> object:
    """`document` without the members §3.3 ignores, at every depth."""
    if not isinstance(document, dict) or not isinstance(document.get("t"), str):
        return document
    tag = document["t"]
    if tag == "null" or "v" not in document:
        return {"t": tag}
    payload = document["v"]
    if tag == "array" and isinstance(payload, list):
        payload = [_known_members(item) for item in payload]
    elif tag == "object" and isinstance(payload, dict):
        payload = {key: _known_members(item) for key, item in payload.items()}
    elif tag == "blob" and isinstance(payload, dict):
        payload = {key: payload[key] for key in _BLOB_MEMBERS if key in payload}
    return {"t": tag, "v": payload}


def canonical_bytes(value: object) -> bytes:
    """The canonical bytes (§4.1) of a Python value's tagged encoding."""
    return rfc8785.dumps(to_tagged(value))


# --- tagged -> Python -------------------------------------------------------------------------


def _invalid(pointer: str, message: str) -> ProtocolError:
    return ProtocolError("protocol.invalid_value", pointer, message)


def check_limits(document: object, pointer: str, check_size: bool = True) -> None:
    """Refuse a raw tagged value over the §4.3 depth or size limit (`protocol.limit_exceeded`).

    Runs before validity (§2 decoding order), so it walks the raw structure. Size is checked
    before descending, so a too-large value is reported at its outermost pointer; depth names the
    first value in document order whose nesting level is 65.
    """
    if check_size and canonical_size(document) > MAX_VALUE_BYTES:
        raise ProtocolError("protocol.limit_exceeded", pointer, "value larger than 1 MiB")
    deep = _first_at_depth(document, pointer, 1)
    if deep is not None:
        raise ProtocolError("protocol.limit_exceeded", deep, "value nested deeper than 64")


def _first_at_depth(node: object, pointer: str, level: int) -> str | None:
    path = _path_to_depth(node, level)
    if path is None:
        return None
    for token in path:  # the pointer is built only for the value found (rarely any)
        pointer = pointer_join(pointer, token)
    return pointer


def _path_to_depth(node: object, level: int) -> list[str | int] | None:
    """The reference tokens to the first value at nesting level 65 under `node`, or None."""
    if level > MAX_DEPTH:
        return []
    if not isinstance(node, dict):
        return None
    tag, payload = node.get("t"), node.get("v")
    if tag == "array" and isinstance(payload, list):
        for index, item in enumerate(payload):
            found = _path_to_depth(item, level + 1)
            if found is not None:
                return ["v", index, *found]
    elif tag == "object" and isinstance(payload, dict):
        for key, item in payload.items():
            found = _path_to_depth(item, level + 1)
            if found is not None:
                return ["v", key, *found]
    return None


class Refused(Exception):
    """`decode_quickly` met something to refuse: the careful decoder says what, and where."""


def decode_quickly(node: object, level: int = 1) -> Any:
    """Decode a valid tagged value, or raise `Refused`: no JSON pointer is built on the way.

    Replay decodes every history value of every invocation, so this is the common case; it also
    refuses a value nested deeper than `MAX_DEPTH` (§4.3), which `from_tagged` leaves to
    `check_limits`. Whatever it refuses, the careful path decodes again to name the pointer.
    """
    if level > MAX_DEPTH or type(node) is not dict:
        raise Refused()
    tag = node.get("t")
    payload = node.get("v")
    if tag == "str" and type(payload) is str and not has_lone_surrogate(payload):
        return payload
    if tag == "i64":
        number = _int_text(payload, I64_MIN, I64_MAX)
        if number is None:
            raise Refused()
        return number
    if tag == "object" and type(payload) is dict:
        members = {}
        for key, item in payload.items():
            if has_lone_surrogate(key):
                raise Refused()
            members[key] = decode_quickly(item, level + 1)
        return members
    if tag == "array" and type(payload) is list:
        return [decode_quickly(item, level + 1) for item in payload]
    try:  # the other tags: the careful decoder, which has no children to name
        return from_tagged(node)
    except ProtocolError:
        raise Refused() from None


def from_tagged(document: object, pointer: str = "") -> Any:
    """Decode a tagged value document strictly; refusals name the innermost bad value (§3.4)."""
    if not isinstance(document, dict):
        raise _invalid(pointer, "a value is a JSON object with a tag t")
    tag = document.get("t")
    if not isinstance(tag, str) or tag not in _TAGS:
        raise _invalid(pointer, "unknown or missing tag")
    if tag == "null":
        return None  # unknown members are ignored (§3.3, D-TAGGED-UNKNOWN-MEMBERS)
    if "v" not in document:
        raise _invalid(pointer, f"a {tag} value needs the member v")
    payload = document["v"]
    if tag == "bool":
        if not isinstance(payload, bool):
            raise _invalid(pointer, "bool payload must be true or false")
        return payload
    if tag in ("i64", "instant", "duration"):
        number = _int_text(payload, I64_MIN, I64_MAX)
        if number is None:
            raise _invalid(pointer, f"{tag} payload must be a canonical signed 64-bit integer")
        if tag == "instant":
            return Instant(number)
        if tag == "duration":
            return Duration(number)
        return number
    if tag == "u64":
        number = _int_text(payload, 0, U64_MAX)
        if number is None:
            raise _invalid(pointer, "u64 payload must be a canonical unsigned 64-bit integer")
        return U64(number)
    if tag == "f64":
        parsed = _float_text(payload)
        if parsed is None:
            raise _invalid(pointer, "f64 payload must be the canonical text of a finite double")
        return parsed
    if tag == "str":
        if not isinstance(payload, str) or has_lone_surrogate(payload):
            raise _invalid(pointer, "str payload must be a valid Unicode string")
        return payload
    if tag == "bytes":
        data = _bytes_text(payload)
        if data is None:
            raise _invalid(pointer, "bytes payload must be canonical padded base64")
        return data
    if tag == "array":
        if not isinstance(payload, list):
            raise _invalid(pointer, "array payload must be a JSON array")
        base = pointer_join(pointer, "v")
        return [from_tagged(item, pointer_join(base, i)) for i, item in enumerate(payload)]
    if tag == "object":
        if not isinstance(payload, dict):
            raise _invalid(pointer, "object payload must be a JSON object")
        if any(has_lone_surrogate(key) for key in payload):
            raise _invalid(pointer, "object keys must be valid Unicode")
        base = pointer_join(pointer, "v")
        return {key: from_tagged(item, pointer_join(base, key)) for key, item in payload.items()}
    return _blob(payload, pointer)


def _blob(payload: object, pointer: str) -> BlobRef:
    if not isinstance(payload, dict):
        raise _invalid(pointer, "blob payload must be an object")
    if not {"sha256", "size"} <= set(payload):
        raise _invalid(pointer, "blob payload needs sha256 and size")
    sha, size, media = payload["sha256"], payload["size"], payload.get("media_type")
    if not isinstance(sha, str) or not _SHA256_TEXT.fullmatch(sha):
        raise _invalid(pointer, "blob sha256 must be 64 lowercase hex digits")
    number = _int_text(size, 0, U64_MAX)
    if number is None:
        raise _invalid(pointer, "blob size must be a canonical u64 string")
    if "media_type" in payload and (
        not isinstance(media, str) or media == "" or has_lone_surrogate(media)
    ):
        raise _invalid(pointer, "blob media_type must be a non-empty string")
    return BlobRef(sha, number, media)


def _int_text(payload: object, low: int, high: int) -> int | None:
    if not isinstance(payload, str) or len(payload) > 21 or not _INT_TEXT.fullmatch(payload):
        return None
    number = int(payload)
    return number if low <= number <= high else None


def parse_int_text(payload: object, low: int, high: int) -> int | None:
    """A canonical decimal integer string within [low, high] (§3.2), else None."""
    return _int_text(payload, low, high)


def _float_text(payload: object) -> float | None:
    if not isinstance(payload, str) or len(payload) > 64 or not _F64_TEXT.fullmatch(payload):
        return None
    number = float(payload)
    if not math.isfinite(number) or float_text(number) != payload:
        return None
    return number


def _bytes_text(payload: object) -> bytes | None:
    if not isinstance(payload, str) or not _BASE64_TEXT.fullmatch(payload):
        return None
    try:
        data = binascii.a2b_base64(payload, strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(data).decode("ascii") != payload:
        return None
    return data
