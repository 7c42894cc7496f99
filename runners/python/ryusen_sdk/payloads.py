"""The event payload conversion `emit` uses (§10.1, D-EMIT-PAYLOAD): bytes or a JSON document.

RFD 2: "a JSON document serializes as given and opaque bytes cross unchanged — and a payload
that is not bytes is refused rather than reinterpreted". A JSON document is marked explicitly
(`JsonDocument`), so a protocol value the workflow happens to hold (a dict decoded from a tagged
`object`, a str) is never mistaken for one and is refused instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import InvalidDeclarationError
from .json_convenience import checked_document
from .numbers import f64_text


@dataclass(frozen=True)
class JsonDocument:
    """An author's JSON document (dict/list/str/int/float/bool/None) to emit as given."""

    document: Any


def event_payload_bytes(payload: object) -> bytes:
    """The exact payload bytes of an emission; anything but bytes or a JsonDocument is refused."""
    if isinstance(payload, JsonDocument):
        return as_given_json(payload.document)
    if type(payload) in (bytes, bytearray):
        return bytes(payload)  # type: ignore[arg-type]
    raise InvalidDeclarationError(
        "an emission payload is bytes or a JsonDocument; "
        f"a {type(payload).__name__} is refused, not reinterpreted"
    )


def as_given_json(document: Any) -> bytes:
    """The document's JSON text as given: its own member order, its own numbers (an int with
    every digit, a float as its shortest round-trip text, negative zero `-0`), no insignificant
    whitespace, RFC 8785 string escapes, UTF-8. A document that is not JSON is refused with
    `sdk.json`; the nearest-double rounding of the §3.6 convenience is not applied (§10.1)."""
    checked_document(document)  # refuses what is not JSON; its rounded copy is the convenience's
    return _write(document).encode("utf-8")


def _write(node: Any) -> str:
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if type(node) is int:
        return str(node)
    if type(node) is float:
        return f64_text(node)
    if type(node) is str:
        return json.dumps(node, ensure_ascii=False)
    if type(node) is list:
        return "[" + ",".join(_write(item) for item in node) + "]"
    members = (json.dumps(key, ensure_ascii=False) + ":" + _write(v) for key, v in node.items())
    return "{" + ",".join(members) + "}"
