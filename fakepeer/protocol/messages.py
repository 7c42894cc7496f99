"""The message catalog (docs/protocol.md §14) and the first four steps of frame decoding (§2).

`KINDS` is the single list of kinds the bench knows: schemas, the fake peer and the fixture
runner all read it. `parse_envelope` turns one frame payload into an envelope dict or raises
`ProtocolViolation` with the category and pointer §2 prescribes.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from fakepeer.protocol.limits import MAX_ID_CHARS
from fakepeer.protocol.shapes import BODIES
from fakepeer.protocol.strictjson import refuse_constant, refuse_repeated_keys
from fakepeer.protocol.values import has_lone_surrogate
from fakepeer.protocol.version import (
    CAPABILITIES,
    KNOWN_VERSIONS,
    PROTOCOL_VERSION,
    SUPPORTED_MAJOR,
    parse_version,
)

Direction = Literal["S->W", "W->S", "both", "B->H", "H->B"]

MALFORMED: Final = "protocol.malformed"
UNSUPPORTED_VERSION: Final = "protocol.unsupported_version"
UNKNOWN_VARIANT: Final = "protocol.unknown_variant"

#: The identity the bench registers a conformance host under (§12.1 `conform.register`).
CONFORM_SCOPE: Final = {"workspace_id": "ws-conform", "application_id": "app-conform"}
CONFORM_RELEASE_ID: Final = "rel-conform-1"
CONFORM_INSTANCE_ID: Final = "conform-instance-1"

_H1 = "sha256:" + "1" * 64
_H2 = "sha256:" + "2" * 64
_H3 = "sha256:" + "3" * 64
_SCOPE = CONFORM_SCOPE
_CAPS = list(CAPABILITIES)
_ERROR = {
    "category": "payments.card_declined",
    "message": "card declined",
    "retryable": False,
    "details": {"code": "51"},
    "cause": {"category": "io.timeout", "message": "gateway", "retryable": True, "details": {}},
}


@dataclass(frozen=True)
class MessageKind:
    """One row of §14 plus what the bench needs to drive it."""

    name: str
    direction: Direction
    section: str
    #: A bench send of this kind opens a new exchange (`invoke` and bench-to-host `conform.*`).
    opens_exchange: bool = False
    #: A server answer the bench sends inside the current exchange (docs/fixtures.md Identifiers).
    server_answer: bool = False
    #: Where the body holds tagged values (§3): `/`-separated members, `*` for every array item,
    #: `*[member=text]` for the items whose member has that value. `value_positions` reads it.
    values: tuple[str, ...] = ()
    example: dict[str, Any] = field(default_factory=dict)

    @property
    def body(self) -> dict[str, Any]:
        """The JSON Schema of the body (shapes.py), the source of the generated schema files."""
        return BODIES[self.name]

    @property
    def required(self) -> tuple[str, ...]:
        """Body members every message of this kind has, in §14 order."""
        return tuple(self.body.get("required", ()))

    @property
    def optional(self) -> tuple[str, ...]:
        """The other body members, in §14 order (members some variants require come here)."""
        return tuple(name for name in _member_names(self.body) if name not in self.required)

    @property
    def members(self) -> tuple[str, ...]:
        """All body members in §14 order."""
        return self.required + self.optional


def _member_names(schema: dict[str, Any]) -> list[str]:
    """Property names of a body schema, then of its `allOf` branches, first mention first."""
    names = list(schema.get("properties", {}))
    for branch in schema.get("allOf", ()):
        for name in branch.get("then", {}).get("properties", {}):
            if name not in names:
                names.append(name)
    return names


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


_CATALOG: tuple[MessageKind, ...] = (
    MessageKind(
        "register",
        "W->S",
        "7.1",
        example=envelope(
            "register",
            {
                "scope": _SCOPE,
                "release": {"kind": "versioned", "id": CONFORM_RELEASE_ID},
                "instance_id": CONFORM_INSTANCE_ID,
                "manifest_hash": _H1,
                "functions": [
                    "conform.echo",
                    "conform.program",
                    "conform.saga",
                    "conform.unportable",
                ],
                "contract": {
                    "protocol_major": 1,
                    "value_codec": "ryusen.tagged/1",
                    "capabilities": _CAPS,
                },
                "versions": [PROTOCOL_VERSION],
                "capabilities": _CAPS,
                "capacity": {"max_concurrent": 1},
                "sdk": {
                    "name": "ryusen-python",
                    "version": "0.1.0",
                    "language": "python",
                    "runtime": "CPython 3.11.7",
                },
            },
        ),
    ),
    MessageKind(
        "register_ack",
        "S->W",
        "7.2",
        server_answer=True,
        example=envelope(
            "register_ack",
            {
                "version": PROTOCOL_VERSION,
                "capabilities": ["compensation", "timers"],
                "required_capabilities": [],
            },
        ),
    ),
    MessageKind(
        "register_refused",
        "S->W",
        "7.2",
        server_answer=True,
        example=envelope(
            "register_refused", {"code": "unauthorized_scope", "message": "not authorized"}
        ),
    ),
    MessageKind(
        "publish_manifest",
        "W->S",
        "8.4",
        example=envelope(
            "publish_manifest",
            {
                "scope": _SCOPE,
                "expected_parent": None,
                "functions": [{"id": "a"}, {"id": "b", "timeout_ms": "3600000"}],
                "triggers": [{"id": "t1", "event": "order.created", "function": "a"}],
                # base64 of the canonical contents bytes of exactly these declarations (§8.3)
                "contents": (
                    "eyJmb3JtYXQiOiJyeXVzZW4ubWFuaWZlc3QtY29udGVudHMvMSIsImZ1bmN0aW9ucyI6W3siaWQiOi"
                    "JhIn0seyJpZCI6ImIiLCJ0aW1lb3V0X21zIjoiMzYwMDAwMCJ9XSwidHJpZ2dlcnMiOlt7ImV2ZW50"
                    "Ijoib3JkZXIuY3JlYXRlZCIsImZ1bmN0aW9uIjoiYSIsImlkIjoidDEifV19"
                ),
            },
        ),
    ),
    MessageKind(
        "manifest_activated",
        "S->W",
        "8.5",
        server_answer=True,
        example=envelope(
            "manifest_activated",
            {"application_generation": _H1, "workspace_generation": _H2, "commit_order": 1},
        ),
    ),
    MessageKind(
        "manifest_conflict",
        "S->W",
        "8.5",
        server_answer=True,
        example=envelope(
            "manifest_conflict", {"active_generation": _H3, "message": "stale expected_parent"}
        ),
    ),
    MessageKind(
        "manifest_rejected",
        "S->W",
        "8.5",
        server_answer=True,
        example=envelope(
            "manifest_rejected",
            {"code": "undeclared_function", "message": "trigger t1 names function z"},
        ),
    ),
    MessageKind(
        "invoke",
        "S->W",
        "9.1",
        values=("input", "history/*[status=completed]/value"),
        opens_exchange=True,
        example=envelope(
            "invoke",
            {
                "run_id": "run-1",
                "function_id": "conform.saga",
                "mode": "forward",
                "input": {"t": "object", "v": {"order": {"t": "str", "v": "A-1"}}},
                "history": [
                    {
                        "step_id": "reserve",
                        "status": "completed",
                        "value": {"t": "str", "v": "reserved:A-1"},
                    },
                    {
                        "step_id": "charge",
                        "status": "failed",
                        "error": {
                            "category": "payments.declined",
                            "message": "no",
                            "retryable": False,
                            "details": {},
                        },
                    },
                ],
                "target": {
                    "run_id": "run-1",
                    "step_id": "notify",
                    "phase": "forward",
                    "attempt": 2,
                    "operation_id": "op-7f3a",
                    "fencing_generation": "11",
                },
            },
            "discovery.first-unresolved#1",
        ),
    ),
    MessageKind(
        "declared",
        "W->S",
        "10.1",
        values=("declaration/input", "declaration/payload"),
        example=envelope(
            "declared",
            {
                "declaration": {
                    "type": "step",
                    "step_id": "charge",
                    "name": "Charge card",
                    "retry": {"max_attempts": 5, "backoff_ms": "1000"},
                    "has_compensation": True,
                }
            },
        ),
    ),
    MessageKind(
        "completed",
        "W->S",
        "10.2",
        values=("value",),
        example=envelope("completed", {"value": {"t": "null"}}),
    ),
    MessageKind(
        "failed",
        "W->S",
        "10.3",
        example=envelope("failed", {"error": _ERROR}),
    ),
    MessageKind(
        "definition_blocked",
        "W->S",
        "10.5",
        example=envelope(
            "definition_blocked",
            {
                "reason": "duplicate_step_id",
                "step_id": "charge",
                "first_source": {"file": "app.py", "line": 12},
                "duplicate_source": {"file": "app.py", "line": 14},
            },
        ),
    ),
    MessageKind(
        "step_completed",
        "W->S",
        "10.4",
        values=("value",),
        example=envelope(
            "step_completed",
            {
                "operation_id": "op-7f3a",
                "attempt": 2,
                "fencing_generation": "11",
                "value": {"t": "object", "v": {"charged": {"t": "str", "v": "A-1"}}},
            },
        ),
    ),
    MessageKind(
        "step_failed",
        "W->S",
        "10.4",
        example=envelope(
            "step_failed",
            {"operation_id": "op-7f3a", "attempt": 2, "fencing_generation": "11", "error": _ERROR},
        ),
    ),
    MessageKind(
        "compensation_completed",
        "W->S",
        "10.4",
        values=("value",),
        example=envelope(
            "compensation_completed",
            {
                "operation_id": "op-9c1d",
                "attempt": 1,
                "fencing_generation": "12",
                "value": {"t": "str", "v": "released:reserved:A-1"},
            },
        ),
    ),
    MessageKind(
        "compensation_failed",
        "W->S",
        "10.4",
        example=envelope(
            "compensation_failed",
            {
                "operation_id": "op-9c1d",
                "attempt": 1,
                "fencing_generation": "12",
                "error": {
                    "category": "app.unhandled",
                    "message": "refund gateway down",
                    "retryable": True,
                    "details": {},
                },
            },
        ),
    ),
    MessageKind(
        "target_not_found",
        "W->S",
        "10.6",
        example=envelope(
            "target_not_found", {"run_id": "run-1", "step_id": "notify", "phase": "forward"}
        ),
    ),
    MessageKind(
        "rejected_before_start",
        "W->S",
        "10.7",
        example=envelope(
            "rejected_before_start",
            {
                "request_id": "example#1",
                "attempt": 2,
                "fencing_generation": "11",
                "reason": {"code": "admission_refused", "message": "draining", "retryable": True},
            },
        ),
    ),
    MessageKind(
        "protocol_error",
        "both",
        "10.9",
        example=envelope(
            "protocol_error",
            {
                "error": {
                    "category": "protocol.invalid_value",
                    "message": "not a canonical signed 64-bit decimal string",
                    "retryable": False,
                    "details": {"pointer": "/body/input/v/0"},
                }
            },
        ),
    ),
    MessageKind(
        "conform.reset",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope("conform.reset", {}),
    ),
    MessageKind(
        "conform.register",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope(
            "conform.register",
            {"scope": _SCOPE, "release_id": None, "instance_id": CONFORM_INSTANCE_ID},
        ),
    ),
    MessageKind(
        "conform.publish",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope(
            "conform.publish",
            {
                "scope": _SCOPE,
                "expected_parent": None,
                "registry": {
                    "functions": [{"id": "b", "timeout": "1h"}, {"id": "a"}],
                    "triggers": [{"id": "t1", "event": "order.created", "function": "a"}],
                },
            },
        ),
    ),
    MessageKind(
        "conform.set_ambient",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope("conform.set_ambient", {"key": "branch", "value": "b"}),
    ),
    MessageKind(
        "conform.set_admission",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope("conform.set_admission", {"open": False}),
    ),
    MessageKind(
        "conform.shutdown",
        "B->H",
        "12.3",
        opens_exchange=True,
        example=envelope("conform.shutdown", {}),
    ),
    MessageKind(
        "conform.trace",
        "both",
        "12.4",
        opens_exchange=True,
        example=envelope(
            "conform.trace",
            {
                "events": [
                    {
                        "event": "started",
                        "step_id": "charge",
                        "phase": "forward",
                        "operation_id": "op-7f3a",
                        "attempt": 2,
                    },
                    {"event": "caught", "by": "catch", "what": "error", "category": "app.declined"},
                ]
            },
        ),
    ),
    MessageKind(
        "conform.ack",
        "H->B",
        "12.3",
        example=envelope("conform.ack", {}),
    ),
    MessageKind(
        "conform.registration_outcome",
        "H->B",
        "12.3",
        example=envelope(
            "conform.registration_outcome",
            {
                "status": "registered",
                "version": PROTOCOL_VERSION,
                "capabilities": ["compensation", "timers"],
            },
        ),
    ),
    MessageKind(
        "conform.publication_outcome",
        "H->B",
        "12.3",
        example=envelope(
            "conform.publication_outcome",
            {"status": "activated", "application_generation": _H1, "workspace_generation": _H2},
        ),
    ),
)

#: Every kind of §14, by name, in catalog order.
KINDS: Final[dict[str, MessageKind]] = {kind.name: kind for kind in _CATALOG}

#: Kinds whose bench send opens a new exchange (docs/fixtures.md Identifiers).
REQUEST_KINDS: Final = frozenset(k.name for k in _CATALOG if k.opens_exchange)
#: Server answers the bench sends within the current exchange.
SERVER_ANSWER_KINDS: Final = frozenset(k.name for k in _CATALOG if k.server_answer)


class ProtocolViolation(Exception):
    """A frame refused while decoding: `category` (`protocol.*`), `pointer`, human `message`.

    `frame_id` is the frame's `id` when it had a valid one, else None (answer with `"-"`, §10.9).
    """

    def __init__(
        self, category: str, pointer: str, message: str, frame_id: str | None = None
    ) -> None:
        super().__init__(f"{category} at JSON pointer {json.dumps(pointer)}: {message}")
        self.category = category
        self.pointer = pointer
        self.message = message
        self.frame_id = frame_id


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


def _payload_text(payload: bytes) -> str:
    if payload.startswith(b"\xef\xbb\xbf"):
        raise ValueError("payload starts with a byte-order mark")
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"payload is not UTF-8: {exc.reason} at byte {exc.start}") from exc


def decode_json_payload(payload: bytes) -> Any:
    """Strict UTF-8 JSON without BOM, repeated keys or lone surrogates; ValueError otherwise."""
    return loads_strict(_payload_text(payload))


def value_positions(envelope: Any) -> Iterator[tuple[str, Any]]:
    """(pointer, value) of every tagged value the envelope's kind carries, in document order.

    The positions are the catalog's `values` of the kind. Tolerant of broken bodies: positions
    that are missing are simply not yielded.
    """
    if not isinstance(envelope, dict):
        return
    body = envelope.get("body")
    paths = _VALUE_PATHS.get(envelope.get("kind"))  # type: ignore[arg-type]
    if not paths or not isinstance(body, dict):
        return
    for path in paths:
        yield from _walk(body, path, "/body")


_Segment = tuple[str, str | None, str | None]  # (member or "*", condition member, its value)
_ITEM = re.compile(r"\*(?:\[(\w+)=([^\]]*)\])?")


def _segments(path: str) -> tuple[_Segment, ...]:
    segments = []
    for part in path.split("/"):
        item = _ITEM.fullmatch(part)
        segments.append(("*", item.group(1), item.group(2)) if item else (part, None, None))
    return tuple(segments)


_VALUE_PATHS: Final = {
    kind.name: tuple(_segments(path) for path in kind.values) for kind in _CATALOG if kind.values
}


def _walk(node: Any, path: tuple[_Segment, ...], pointer: str) -> Iterator[tuple[str, Any]]:
    if not path:
        yield pointer, node
        return
    (member, when, equals), rest = path[0], path[1:]
    if member == "*":
        for index, item in enumerate(node if isinstance(node, list) else ()):
            if when is None or (isinstance(item, dict) and item.get(when) == equals):
                yield from _walk(item, rest, f"{pointer}/{index}")
    elif isinstance(node, dict) and member in node:
        yield from _walk(node[member], rest, f"{pointer}/{member}")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= MAX_ID_CHARS


def parse_envelope(payload: bytes) -> dict[str, Any]:
    """Decode one frame payload through §2 steps 1-4 (JSON, shape, major, known kind).

    Body members, limits and tagged values (steps 5-7) are checked by `decode.decode_frame`.
    A key repeated in any object is `protocol.malformed` at `""` (step 1: decoders disagree
    on which member wins). A lone surrogate inside a tagged value is left for step 7 (§3.4
    pointer); anywhere else it is `protocol.malformed` at `""`.
    Raises ProtocolViolation with the first problem found.
    """
    try:
        doc, suspicious = loads_lenient(_payload_text(payload))
    except ValueError as exc:
        raise ProtocolViolation(MALFORMED, "", f"not a JSON text: {exc}") from None
    if suspicious:
        # Inside a tagged value a lone surrogate is a §3.4 conversion error, reported in
        # step 7; anywhere else the frame does not decode.
        inside = frozenset(id(value) for _, value in value_positions(doc))
        known = isinstance(doc, dict) and doc.get("kind") in KINDS
        problem = find_lone_surrogate(doc, inside if known else frozenset())
        if problem is not None:
            raise ProtocolViolation(MALFORMED, "", f"not a JSON text: {problem}")
    if not isinstance(doc, dict):
        raise ProtocolViolation(MALFORMED, "", "an envelope must be a JSON object")
    frame_id = doc["id"] if _valid_id(doc.get("id")) else None

    def bad(pointer: str, message: str, category: str = MALFORMED) -> ProtocolViolation:
        return ProtocolViolation(category, pointer, message, frame_id)

    version = doc.get("version")
    if not isinstance(version, str):
        raise bad("/version", "member 'version' must be a string")
    try:
        major, _minor = parse_version(version)
    except ValueError:
        raise bad("/version", f"version {version!r} does not match MAJOR.MINOR") from None
    kind = doc.get("kind")
    if not isinstance(kind, str):
        raise bad("/kind", "member 'kind' must be a string")
    if not _valid_id(doc.get("id")):
        raise bad("/id", f"member 'id' must be a string of 1 to {MAX_ID_CHARS} characters")
    if not isinstance(doc.get("body"), dict):
        raise bad("/body", "member 'body' must be a JSON object")
    if major != SUPPORTED_MAJOR:
        raise bad("/version", f"major version {major} is not spoken", UNSUPPORTED_VERSION)
    if kind not in KINDS:
        raise bad("/kind", f"unknown kind {kind!r}", UNKNOWN_VARIANT)
    return doc
