"""The tagged value model (docs/protocol.md §3, limits of §4.3).

One place decides what a tagged value is: `validate_value` refuses everything outside the domain
with the JSON pointer §3.4 asks for, `to_python`/`from_python` convert both ways without ever
coercing, and `plain_to_tagged` expands the fixtures' `$plain` notation (§13.1).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass
from typing import Final

from fakepeer.protocol.limits import I64_MAX, I64_MIN, MAX_DEPTH, MAX_VALUE_BYTES, U64_MAX
from fakepeer.protocol.pointer import escape as escape_pointer_token

INVALID_VALUE: Final = "protocol.invalid_value"
LIMIT_EXCEEDED: Final = "protocol.limit_exceeded"
SDK_CONVERSION: Final = "sdk.conversion"

#: Every tag of §3.1, in the order of its table.
TAGS: Final = (
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
)
_TAG_SET: Final = frozenset(TAGS)

#: Canonical integer text (§3.2); ASCII digits only, checked with fullmatch.
INTEGER_TEXT: Final = re.compile(r"0|-?[1-9][0-9]*", re.ASCII)
#: A blob's `sha256`: 64 lowercase hex digits.
SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}", re.ASCII)


class ConversionError(ValueError):
    """A value outside the tagged model, with the category and pointer a refusal must report."""

    def __init__(self, category: str, pointer: str, reason: str) -> None:
        self.category = category
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"{category} at JSON pointer {json.dumps(pointer)}: {reason}")


# --------------------------------------------------------------------------- language types


class U64(int):
    """An int that is an unsigned 64-bit value on the wire (`u64`), kept apart from `i64`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"U64({int(self)})"


@dataclass(frozen=True, slots=True)
class Instant:
    """A point in time: signed milliseconds since the Unix epoch (`instant`)."""

    ms: int


@dataclass(frozen=True, slots=True)
class Duration:
    """A signed count of milliseconds (`duration`); never rounded, unlike §6 wire counts."""

    ms: int


@dataclass(frozen=True, slots=True)
class BlobRef:
    """A reference to content stored elsewhere (`blob`)."""

    sha256: str
    size: int
    media_type: str | None = None


# --------------------------------------------------------------------------- helpers


def has_lone_surrogate(text: str) -> bool:
    """True when the text holds an unpaired surrogate, which no UTF-8 encoder accepts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def format_f64(value: float) -> str:
    """Canonical `f64` text (§3.2): ECMAScript Number::toString, negative zero as `-0`.

    Built from Python's shortest round-trip `repr` digits, laid out by the ECMAScript rules.
    """
    if not math.isfinite(value):
        raise ValueError(f"not a finite double: {value!r}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if value < 0:
        return "-" + format_f64(-value)
    text = repr(value)
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    n = len(int_part) + exponent
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{sign}{abs(e)}"


def parse_f64(text: str) -> float | None:
    """Parse canonical `f64` text; None when it is not the canonical text of a finite double."""
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(value):
        return None
    return value if format_f64(value) == text else None


def parse_int_text(text: object, low: int, high: int) -> int | None:
    """Parse canonical integer text (§3.2) within [low, high]; None otherwise."""
    if not isinstance(text, str) or not INTEGER_TEXT.fullmatch(text):
        return None
    if len(text) > 21:  # longer than any 64-bit value; avoid big-int parsing of huge text
        return None
    number = int(text)
    return number if low <= number <= high else None


def decode_bytes_text(text: object) -> bytes | None:
    """Decode canonical padded base64 (§3.3); None unless re-encoding gives the same text."""
    if not isinstance(text, str):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def value_depth(doc: object) -> int:
    """Nesting depth of a (possibly invalid) value per §4.3: scalars 1, containers 1 + deepest.

    Iterative, so any document the JSON parser produced can be measured.
    """
    deepest = 0
    stack = [(doc, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            tag, payload = node.get("t"), node.get("v")
            if tag == "array" and isinstance(payload, list):
                stack.extend((item, level + 1) for item in payload)
            elif tag == "object" and isinstance(payload, dict):
                stack.extend((item, level + 1) for item in payload.values())
    return deepest


def canonical_value_size(doc: object) -> int:
    """Length in bytes of the canonical encoding (§4.1) of a tagged value, the limit of §4.3.

    A tagged value holds no JSON numbers, and RFC 8785 escapes strings exactly as `json.dumps`
    with `ensure_ascii=False` does, so the fast C encoder gives the same length without sorting.
    Unknown members are ignored (§3.3, D-TAGGED-UNKNOWN-MEMBERS) and the canonical encoding does
    not carry them, so they do not count: when the text as written is over the limit, it is
    measured again without them (only that case pays for the walk). Under the limit the number
    may still include them; it is exact whenever it decides a refusal.
    """
    size = _json_size(doc)
    if size > MAX_VALUE_BYTES:
        size = _json_size(_known_members(doc))
    return size


def _json_size(doc: object) -> int:
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return len(text.encode("utf-8", "surrogatepass"))


_BLOB_MEMBERS = ("sha256", "size", "media_type")


def _known_members(doc: object) -> object:
    """`doc` without the members of its tagged value objects (and blob payloads) that §3.3
    ignores, at every depth; anything that is not a tagged value object is kept as it is."""
    if not isinstance(doc, dict) or not isinstance(doc.get("t"), str):
        return doc
    tag = doc["t"]
    if tag == "null" or "v" not in doc:
        return {"t": tag}
    payload = doc["v"]
    if tag == "array" and isinstance(payload, list):
        payload = [_known_members(item) for item in payload]
    elif tag == "object" and isinstance(payload, dict):
        payload = {key: _known_members(item) for key, item in payload.items()}
    elif tag == "blob" and isinstance(payload, dict):
        payload = {key: payload[key] for key in _BLOB_MEMBERS if key in payload}
    return {"t": tag, "v": payload}


def _first_too_deep(doc: object, pointer: str, level: int) -> str | None:
    """Pointer of the first value (document order) at depth MAX_DEPTH + 1, leniently walked."""
    if level > MAX_DEPTH:
        return pointer
    if isinstance(doc, dict):
        tag, payload = doc.get("t"), doc.get("v")
        if tag == "array" and isinstance(payload, list):
            for index, item in enumerate(payload):
                found = _first_too_deep(item, f"{pointer}/v/{index}", level + 1)
                if found is not None:
                    return found
        elif tag == "object" and isinstance(payload, dict):
            for key, item in payload.items():
                child = f"{pointer}/v/{escape_pointer_token(str(key))}"
                found = _first_too_deep(item, child, level + 1)
                if found is not None:
                    return found
    return None


def _size_error(doc: object, pointer: str, category: str) -> ConversionError | None:
    """The size limit error of the outermost value, checked before descending (§3.4)."""
    try:
        size = canonical_value_size(doc)
    except (TypeError, ValueError, RecursionError):
        return None  # not JSON-shaped: the encoding rules refuse it
    if size > MAX_VALUE_BYTES:
        return ConversionError(
            category, pointer, f"canonical encoding is {size} bytes, over {MAX_VALUE_BYTES}"
        )
    return None


def _depth_error(doc: object, pointer: str, category: str) -> ConversionError | None:
    """The depth limit error at the first value (document order) of nesting level 65."""
    deep = _first_too_deep(doc, pointer, 1)
    if deep is None:
        return None
    return ConversionError(category, deep, f"nesting depth exceeds {MAX_DEPTH}")


# --------------------------------------------------------------------------- validation


class _TooDeep(Exception):
    pass


def _invalid(pointer: str, reason: str) -> ConversionError:
    return ConversionError(INVALID_VALUE, pointer, reason)


def _check(doc: object, pointer: str, level: int) -> None:
    """Validate one tagged value object and its children; raise at the innermost invalid one.

    Children of a container are checked before the container's own members, so when both are
    broken the innermost tagged value is the one reported (§3.4).
    """
    if level > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(doc, dict):
        raise _invalid(pointer, f"a value must be a JSON object, got {_json_type(doc)}")
    tag = doc.get("t")
    payload = doc.get("v")
    if tag == "array" and isinstance(payload, list):
        for index, item in enumerate(payload):
            _check(item, f"{pointer}/v/{index}", level + 1)
    elif tag == "object" and isinstance(payload, dict):
        for key, item in payload.items():
            if isinstance(key, str):
                _check(item, f"{pointer}/v/{escape_pointer_token(key)}", level + 1)
    _check_own(doc, pointer)


def _check_own(doc: dict, pointer: str) -> None:  # type: ignore[type-arg]
    """The rules of one tagged value object itself (§3.1-§3.3), children excluded."""
    tag = doc.get("t")
    if not isinstance(tag, str):
        raise _invalid(pointer, "member 't' must be a string" if "t" in doc else "missing 't'")
    if tag not in _TAG_SET:
        raise _invalid(pointer, f"unknown tag {_show(tag)}")
    if tag == "null":
        return  # unknown members are ignored (§3.3, D-TAGGED-UNKNOWN-MEMBERS)
    if "v" not in doc:
        raise _invalid(pointer, f"a {tag} value needs the member 'v'")
    payload = doc["v"]
    if tag == "str":
        if not isinstance(payload, str):
            raise _invalid(pointer, "a str payload must be a JSON string")
        if has_lone_surrogate(payload):
            raise _invalid(pointer, "string contains a lone surrogate")
    elif tag == "i64" or tag == "instant" or tag == "duration":
        if parse_int_text(payload, I64_MIN, I64_MAX) is None:
            raise _invalid(pointer, f"not canonical i64 text: {_show(payload)}")
    elif tag == "array":
        if not isinstance(payload, list):
            raise _invalid(pointer, "an array payload must be a JSON array")
    elif tag == "object":
        if not isinstance(payload, dict):
            raise _invalid(pointer, "an object payload must be a JSON object")
        for key in payload:
            if not isinstance(key, str) or has_lone_surrogate(key):
                raise _invalid(pointer, "object key is not a string without lone surrogates")
    elif tag == "bool":
        if not isinstance(payload, bool):
            raise _invalid(pointer, "a bool payload must be true or false")
    elif tag == "u64":
        if parse_int_text(payload, 0, U64_MAX) is None:
            raise _invalid(pointer, f"not canonical u64 text: {_show(payload)}")
    elif tag == "f64":
        if not isinstance(payload, str) or parse_f64(payload) is None:
            raise _invalid(pointer, f"not the canonical text of a finite double: {_show(payload)}")
    elif tag == "bytes":
        if decode_bytes_text(payload) is None:
            raise _invalid(pointer, "not canonical padded base64")
    else:  # blob
        _check_blob(payload, pointer)


def _check_blob(payload: object, pointer: str) -> None:
    if not isinstance(payload, dict):
        raise _invalid(pointer, "a blob payload must be a JSON object")
    digest = payload.get("sha256")
    if not isinstance(digest, str) or not SHA256_HEX.fullmatch(digest):
        raise _invalid(pointer, "blob sha256 must be 64 lowercase hex digits")
    if parse_int_text(payload.get("size"), 0, U64_MAX) is None:
        raise _invalid(pointer, "blob size must be a canonical u64 string")
    if "media_type" in payload:
        media = payload["media_type"]
        if not isinstance(media, str) or not media or has_lone_surrogate(media):
            raise _invalid(pointer, "blob media_type must be a non-empty string")


def _show(payload: object) -> str:
    """A short repr for messages: payloads can be megabytes long."""
    text = repr(payload)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_type(doc: object) -> str:
    if doc is None:
        return "null"
    if isinstance(doc, bool):
        return "boolean"
    if isinstance(doc, int | float):
        return "number"
    if isinstance(doc, str):
        return "string"
    if isinstance(doc, list):
        return "array"
    if isinstance(doc, dict):
        return "object"
    return type(doc).__name__


def validate_value(doc: object, pointer: str = "") -> None:
    """Refuse a decoded JSON document that is not a valid tagged value (§3, §4.3).

    `pointer` is where the value sits in its message. Limits come before encodings, as the §2
    decoding order says: the size of the outermost value first, then depth (the first value of
    nesting level 65), then the innermost tagged value whose own encoding is invalid (§3.4).
    """
    size = _size_error(doc, pointer, LIMIT_EXCEEDED)
    if size is not None:
        raise size
    try:
        _check(doc, pointer, 1)
    except (_TooDeep, ConversionError) as problem:
        depth = _depth_error(doc, pointer, LIMIT_EXCEEDED)
        if depth is not None:
            raise depth from None
        assert isinstance(problem, ConversionError)
        raise problem from None


def is_valid_value(doc: object) -> bool:
    """True when `doc` is a valid tagged value."""
    try:
        validate_value(doc)
    except ConversionError:
        return False
    return True


# --------------------------------------------------------------------------- to Python


def to_python(doc: object) -> object:
    """Decode a tagged value into Python values (§3.5); refuses invalid documents."""
    validate_value(doc)
    return _decode(doc)


def _decode(doc: dict) -> object:  # type: ignore[type-arg]
    tag = doc["t"]
    if tag == "null":
        return None
    payload = doc["v"]
    if tag == "bool" or tag == "str":
        return payload
    if tag == "i64":
        return int(payload)
    if tag == "u64":
        return U64(int(payload))
    if tag == "f64":
        return float(payload)
    if tag == "bytes":
        return base64.b64decode(payload)
    if tag == "array":
        return [_decode(item) for item in payload]
    if tag == "object":
        return {key: _decode(item) for key, item in payload.items()}
    if tag == "instant":
        return Instant(int(payload))
    if tag == "duration":
        return Duration(int(payload))
    return BlobRef(payload["sha256"], int(payload["size"]), payload.get("media_type"))


# --------------------------------------------------------------------------- from Python


def _refuse(pointer: str, reason: str) -> ConversionError:
    return ConversionError(SDK_CONVERSION, pointer, reason)


def from_python(value: object) -> dict:  # type: ignore[type-arg]
    """Encode a Python value as a tagged value (§3.5); refuses with `sdk.conversion`.

    Scalars must be of the exact types of the model (an IntEnum or str subclass is an arbitrary
    object, not coerced); tuples and sets are refused (only list is an array); limits apply.
    """
    doc = _encode(value, "", 1)
    size = canonical_value_size(doc)
    if size > MAX_VALUE_BYTES:
        raise _refuse("", f"canonical encoding is {size} bytes, over {MAX_VALUE_BYTES}")
    return doc


def _encode(value: object, pointer: str, level: int) -> dict:  # type: ignore[type-arg]
    if level > MAX_DEPTH:
        raise _refuse(pointer, f"nesting depth exceeds {MAX_DEPTH}")
    kind = type(value)
    if value is None:
        return {"t": "null"}
    if kind is bool:
        return {"t": "bool", "v": value}
    if kind is U64:
        number = int(value)  # type: ignore[call-overload]
        if not 0 <= number <= U64_MAX:
            raise _refuse(pointer, f"U64 out of range: {number}")
        return {"t": "u64", "v": str(number)}
    if kind is int:
        assert isinstance(value, int)
        if I64_MIN <= value <= I64_MAX:
            return {"t": "i64", "v": str(value)}
        if 0 <= value <= U64_MAX:
            return {"t": "u64", "v": str(value)}
        raise _refuse(pointer, "integer outside the signed and unsigned 64-bit ranges")
    if kind is float:
        assert isinstance(value, float)
        if not math.isfinite(value):
            raise _refuse(pointer, f"non-finite float {value!r} has no tagged form")
        return {"t": "f64", "v": format_f64(value)}
    if kind is str:
        assert isinstance(value, str)
        if has_lone_surrogate(value):
            raise _refuse(pointer, "string contains a lone surrogate")
        return {"t": "str", "v": value}
    if kind is bytes or kind is bytearray:
        assert isinstance(value, bytes | bytearray)
        return {"t": "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list):
        return {
            "t": "array",
            "v": [_encode(item, f"{pointer}/v/{i}", level + 1) for i, item in enumerate(value)],
        }
    if isinstance(value, dict):
        members: dict[str, object] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _refuse(pointer, f"map key {key!r} is not a string")
            if has_lone_surrogate(key):
                raise _refuse(pointer, "map key contains a lone surrogate")
            members[key] = _encode(item, f"{pointer}/v/{escape_pointer_token(key)}", level + 1)
        return {"t": "object", "v": members}
    if kind is Instant or kind is Duration:
        assert isinstance(value, Instant | Duration)
        ms = value.ms
        if type(ms) is not int or not I64_MIN <= ms <= I64_MAX:
            raise _refuse(pointer, f"{kind.__name__}.ms must be a signed 64-bit int")
        return {"t": "instant" if kind is Instant else "duration", "v": str(ms)}
    if kind is BlobRef:
        assert isinstance(value, BlobRef)
        return {"t": "blob", "v": _encode_blob(value, pointer)}
    raise _refuse(pointer, f"a {kind.__name__} has no tagged form; convert it explicitly")


def _encode_blob(blob: BlobRef, pointer: str) -> dict[str, str]:
    if type(blob.sha256) is not str or not SHA256_HEX.fullmatch(blob.sha256):
        raise _refuse(pointer, "BlobRef.sha256 must be 64 lowercase hex digits")
    if type(blob.size) is not int or not 0 <= blob.size <= U64_MAX:
        raise _refuse(pointer, "BlobRef.size must be an unsigned 64-bit int")
    payload = {"sha256": blob.sha256, "size": str(blob.size)}
    if blob.media_type is not None:
        if type(blob.media_type) is not str or not blob.media_type:
            raise _refuse(pointer, "BlobRef.media_type must be a non-empty string or None")
        if has_lone_surrogate(blob.media_type):
            raise _refuse(pointer, "BlobRef.media_type contains a lone surrogate")
        payload["media_type"] = blob.media_type
    return payload


# --------------------------------------------------------------------------- plain notation


def plain_to_tagged(plain: object, pointer: str = "") -> dict:  # type: ignore[type-arg]
    """Expand the fixtures' `$plain` notation (§13.1, docs/fixtures.md Macros) to a tagged value.

    `{"$tagged": V}` inserts V verbatim (never validated: fixtures use it for invalid values);
    `{"$bytes": "text"}` gives the bytes of the text's UTF-8. Any other one-member `$` object is
    refused: other macros must be expanded before this one. `pointer` locates errors.
    """
    if plain is None:
        return {"t": "null"}
    if isinstance(plain, bool):
        return {"t": "bool", "v": plain}
    if isinstance(plain, int):
        if not I64_MIN <= plain <= I64_MAX:
            raise _refuse(pointer, f"plain integer {plain} is outside i64")
        return {"t": "i64", "v": str(int(plain))}
    if isinstance(plain, float):
        if not math.isfinite(plain):
            raise _refuse(pointer, f"plain number {plain!r} is not finite")
        return {"t": "f64", "v": format_f64(plain)}
    if isinstance(plain, str):
        return {"t": "str", "v": plain}
    if isinstance(plain, list):
        return {
            "t": "array",
            "v": [plain_to_tagged(item, f"{pointer}/{i}") for i, item in enumerate(plain)],
        }
    if isinstance(plain, dict):
        if len(plain) == 1:
            (key,) = plain
            if isinstance(key, str) and key.startswith("$"):
                return _plain_macro(key, plain[key], pointer)
        members = {}
        for key, item in plain.items():
            if not isinstance(key, str):
                raise _refuse(pointer, f"plain object key {key!r} is not a string")
            members[key] = plain_to_tagged(item, f"{pointer}/{escape_pointer_token(key)}")
        return {"t": "object", "v": members}
    raise _refuse(pointer, f"a {type(plain).__name__} is not plain JSON")


def _plain_macro(name: str, argument: object, pointer: str) -> dict:  # type: ignore[type-arg]
    if name == "$tagged":
        if not isinstance(argument, dict):
            raise _refuse(pointer, "$tagged needs a JSON object")
        return argument
    if name == "$bytes":
        if not isinstance(argument, str):
            raise _refuse(pointer, "$bytes needs a string")
        data = argument.encode("utf-8", "surrogatepass")
        return {"t": "bytes", "v": base64.b64encode(data).decode("ascii")}
    raise _refuse(pointer, f"unknown macro {name!r} inside $plain")
