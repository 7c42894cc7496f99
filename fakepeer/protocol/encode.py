"""The frames the bench writes: envelopes built from parts and encoded to bytes (§1, §2), and
fixed frames as byte templates the hot path sends and recognises without JSON."""

from __future__ import annotations

import functools
import json
from typing import Any

from fakepeer.protocol.version import KNOWN_VERSIONS, PROTOCOL_VERSION


def encode_envelope(envelope: dict[str, Any]) -> bytes:
    """The compact JSON text of a frame (§1): UTF-8, or `\\u` escapes where a string holds a
    lone surrogate (UTF-8 cannot carry one; the escape is the same JSON). The one encoder of
    the frames the bench sends and of the frames its reports record."""
    try:
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(envelope, separators=(",", ":")).encode("ascii")


def envelope(kind: str, body: dict[str, Any], ident: str = "example#1") -> dict[str, Any]:
    """An envelope of this protocol version (§2): the one place one is built from parts."""
    return {"version": PROTOCOL_VERSION, "kind": kind, "id": ident, "body": body}


def encode_frame(kind: str, body: dict[str, Any], ident: str) -> bytes:
    """The frame payload of an envelope built from parts (`envelope`, then `encode_envelope`)."""
    return encode_envelope(envelope(kind, body, ident))


#: A fixed frame's bytes with `%s` where its id goes (ids the bench makes need no escape).
FrameTemplate = bytes


def frame_templates(kind: str, body: bytes = b"{}") -> tuple[FrameTemplate, ...]:
    """A frame whose body is fixed, byte for byte, as hosts usually write it: members in the order
    of §2 (as `encode_frame` writes it), or sorted (RFC 8785), under each version this bench
    knows (a 1.0 host writes 1.0). The hot path sends the first (this bench's version, §2 order)
    and recognises an answer by any, without JSON."""
    name = kind.encode("ascii")
    versions = (PROTOCOL_VERSION, *(v for v in KNOWN_VERSIONS if v != PROTOCOL_VERSION))
    templates: list[FrameTemplate] = []
    for text in versions:
        version = text.encode("ascii")
        templates.append(
            b'{"version":"%s","kind":"%s","id":"%%s","body":%s}' % (version, name, body)
        )
        templates.append(
            b'{"body":%s,"id":"%%s","kind":"%s","version":"%s"}' % (body, name, version)
        )
    return tuple(templates)


def spelled_as(payload: bytes, templates: tuple[FrameTemplate, ...], ident: str) -> bool:
    """Whether `payload` is one of `templates` with `ident` spliced in."""
    raw = ident.encode("ascii")
    size = len(payload) - len(raw)
    for head, tail in _split_templates(templates):  # runs twice per case on the hot path
        if (
            size == len(head) + len(tail)
            and payload.startswith(head)
            and payload.endswith(tail)
            and payload[len(head) : len(head) + len(raw)] == raw
        ):
            return True
    return False


@functools.lru_cache(maxsize=16)
def _split_templates(templates: tuple[FrameTemplate, ...]) -> tuple[tuple[bytes, bytes], ...]:
    """Each template as the bytes before and after its one `%s` (`%%` unescaped)."""
    pairs = []
    for template in templates:
        head, tail = template.split(b"%s")
        pairs.append((head.replace(b"%%", b"%"), tail.replace(b"%%", b"%")))
    return tuple(pairs)
