"""Strict JSON text parsing shared by the frame codec and the JSON convenience.

The standard parser accepts `NaN` and keeps the last of two equal keys; the protocol refuses
both (§3.3, §3.6). Lone surrogate escapes still parse: callers check them where they matter.
"""

from __future__ import annotations

import json
from typing import Any


class JsonTextError(ValueError):
    """The bytes are not one strict JSON text."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise JsonTextError("the same key appears twice in one object")
    return result


def _refuse_constant(name: str) -> Any:
    raise JsonTextError(f"{name} is not JSON")


def parse(data: bytes, parse_int: Any = None, parse_float: Any = None) -> Any:
    """Parse one UTF-8 JSON text: no BOM, no `NaN`/`Infinity`, no key twice in one object."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise JsonTextError("byte-order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonTextError("not UTF-8") from exc
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_refuse_constant,
            parse_int=parse_int,
            parse_float=parse_float,
        )
    except RecursionError as exc:
        raise JsonTextError("nesting too deep") from exc
    except ValueError as exc:
        raise JsonTextError(str(exc)) from exc


def has_lone_surrogate(text: str) -> bool:
    """True when `text` is not valid Unicode (a lone surrogate escape decoded into it)."""
    if text.isascii():  # the common case, checked in C without building the UTF-8 copy
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def pointer_join(pointer: str, token: str | int) -> str:
    """Append one RFC 6901 reference token to a JSON pointer."""
    if type(token) is int:  # an array index: nothing to escape
        return f"{pointer}/{token}"
    text = str(token)
    if "~" in text or "/" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return f"{pointer}/{text}"
