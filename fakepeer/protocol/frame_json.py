"""A frame payload read as JSON (§2 step 1): strict UTF-8 without BOM, no key twice in one
object, no NaN/Infinity, and lone surrogate escapes found where a caller must judge them.

The reference decoder (decode.py) keeps a lone surrogate inside a tagged value for §3.4 to
refuse at its own pointer; everything else reads a payload with `decode_json_payload`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fakepeer.protocol.strictjson import refuse_constant, refuse_repeated_keys
from fakepeer.protocol.values import has_lone_surrogate

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def find_lone_surrogate(doc: Any, skip: frozenset[int] = frozenset()) -> str | None:
    """Describe the first lone surrogate in a decoded document's strings or keys, or None.

    Subtrees whose `id()` is in `skip` (tagged values, judged later by §3.4) are not searched.
    Iterative, so documents nested as deeply as the JSON parser allows are fine.
    """
    stack = [doc]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, str):
            if has_lone_surrogate(node):
                return "a string contains a lone surrogate escape"
        elif isinstance(node, dict):
            for key, item in node.items():
                if has_lone_surrogate(key):
                    return "an object key contains a lone surrogate escape"
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)
    return None


def loads_lenient(text: str) -> tuple[Any, bool]:
    """Parse RFC 8259 JSON text, refusing repeated keys and NaN/Infinity literals.

    Lone surrogate escapes are kept (a tagged value refuses them at its own pointer, §3.4);
    the flag says whether the text may hold one. Raises ValueError for anything else.
    """
    try:
        doc = json.loads(
            text, object_pairs_hook=refuse_repeated_keys, parse_constant=refuse_constant
        )
    except RecursionError as exc:
        raise ValueError("JSON nesting too deep to decode") from exc
    return doc, _SURROGATE_ESCAPE.search(text) is not None


def loads_strict(text: str) -> Any:
    """Parse RFC 8259 JSON text refusing repeated keys, NaN/Infinity and lone surrogates."""
    doc, suspicious = loads_lenient(text)
    if suspicious:
        problem = find_lone_surrogate(doc)
        if problem is not None:
            raise ValueError(problem)
    return doc


def payload_text(payload: bytes) -> str:
    """The payload as text: UTF-8 without a byte-order mark; ValueError otherwise."""
    if payload.startswith(b"\xef\xbb\xbf"):
        raise ValueError("payload starts with a byte-order mark")
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"payload is not UTF-8: {exc.reason} at byte {exc.start}") from exc


def decode_json_payload(payload: bytes) -> Any:
    """Strict UTF-8 JSON without BOM, repeated keys or lone surrogates; ValueError otherwise."""
    return loads_strict(payload_text(payload))
