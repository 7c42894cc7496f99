"""The reference frame decoder: all seven steps of the §2 decoding order, with §5.2 categories.

`parse_envelope` takes a payload through steps 1-4 (JSON, shape, major, known kind);
`decode_frame` through all seven, raising `ProtocolViolation` with the first problem found.

An SDK answers an undecodable frame with `protocol_error` (§10.9); this module computes the
category and pointer the protocol prescribes, so the bench can check fixtures and SDK answers
against one executable reading of docs/protocol.md.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, Final

from jsonschema.exceptions import ValidationError

from fakepeer.protocol.errors import (
    PROTOCOL_MALFORMED,
    PROTOCOL_UNKNOWN_FUNCTION,
    PROTOCOL_UNKNOWN_VARIANT,
    PROTOCOL_UNSUPPORTED_VERSION,
)
from fakepeer.protocol.frame_json import find_lone_surrogate, loads_lenient, payload_text
from fakepeer.protocol.limits import MAX_HISTORY_ENTRIES, MAX_ID_CHARS, MAX_REQUEST_BYTES
from fakepeer.protocol.messages import KINDS, SERVER_ANSWER_KINDS
from fakepeer.protocol.pointer import join
from fakepeer.protocol.schema import is_schema_valid, schema_errors
from fakepeer.protocol.value_paths import value_positions
from fakepeer.protocol.values import (
    LIMIT_EXCEEDED,
    ConversionError,
    escape_pointer_token,
    validate_value,
)
from fakepeer.protocol.version import SUPPORTED_MAJOR, parse_version

MALFORMED: Final = PROTOCOL_MALFORMED
UNSUPPORTED_VERSION: Final = PROTOCOL_UNSUPPORTED_VERSION
UNKNOWN_VARIANT: Final = PROTOCOL_UNKNOWN_VARIANT


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


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= MAX_ID_CHARS


def parse_envelope(payload: bytes) -> dict[str, Any]:
    """Decode one frame payload through §2 steps 1-4 (JSON, shape, major, known kind).

    Body members, limits and tagged values (steps 5-7) are checked by `decode_frame`.
    A key repeated in any object is `protocol.malformed` at `""` (step 1: decoders disagree
    on which member wins). A lone surrogate inside a tagged value is left for step 7 (§3.4
    pointer); anywhere else it is `protocol.malformed` at `""`.
    Raises ProtocolViolation with the first problem found.
    """
    try:
        doc, suspicious = loads_lenient(payload_text(payload))
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


def _pointer(path: Any) -> str:
    return join(path)


def _inside(pointer: str, roots: list[str]) -> bool:
    return any(pointer == root or pointer.startswith(root + "/") for root in roots)


def _classify(error: ValidationError) -> tuple[int, str, str]:
    """(phase, category, pointer) of one schema error: presence/type first, then variants."""
    pointer = _pointer(error.absolute_path)
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        if missing:
            return 0, MALFORMED, f"{pointer}/{escape_pointer_token(missing[0])}"
    if error.validator == "enum" and isinstance(error.instance, str):
        return 1, UNKNOWN_VARIANT, pointer
    return 0, MALFORMED, pointer


def _member_rank(kind: str, pointer: str) -> int:
    members = KINDS[kind].members
    parts = pointer.split("/")
    name = parts[2] if len(parts) > 2 else ""
    return members.index(name) if name in members else len(members)


def body_violation(envelope: dict[str, Any]) -> ProtocolViolation | None:
    """Step 5: the first body problem (presence and JSON type, then enum variants), or None.

    Errors at or inside tagged values are left to step 7. Beyond the schema it checks what
    §9.1 adds for `invoke`: each history `step_id` once, and the target's run ID.
    """
    kind = envelope["kind"]
    frame_id = envelope["id"]
    roots = [pointer for pointer, _ in value_positions(envelope)]
    found = []
    errors = [] if is_schema_valid(envelope) else schema_errors(envelope)
    for error in errors:
        phase, category, pointer = _classify(error)
        if not _inside(pointer, roots):
            found.append((phase, _member_rank(kind, pointer), pointer, category, error.message))
    variants = {pointer for phase, _, pointer, _, _ in found if phase == 1}
    # An unknown variant is reported as such, not as a mismatch with an expected constant.
    found = [item for item in found if item[0] == 1 or item[2] not in variants]
    if found:
        _, _, pointer, category, message = min(found)
        return ProtocolViolation(category, pointer, message, frame_id)
    if kind == "invoke":
        body = envelope["body"]
        seen: set[str] = set()
        for index, entry in enumerate(body["history"]):
            if entry["step_id"] in seen:
                pointer = f"/body/history/{index}/step_id"
                return ProtocolViolation(
                    MALFORMED, pointer, "step_id appears twice in history", frame_id
                )
            seen.add(entry["step_id"])
        target = body.get("target")
        if body["mode"] != "discover" and target["run_id"] != body["run_id"]:
            message = "target run_id differs from the body's run_id"
            return ProtocolViolation(MALFORMED, "/body/target/run_id", message, frame_id)
    return None


def limit_violation(envelope: dict[str, Any], payload_length: int) -> ProtocolViolation | None:
    """Step 6 for the whole message: the `invoke` request size and history length."""
    if envelope["kind"] != "invoke":
        return None
    frame_id = envelope["id"]
    if payload_length > MAX_REQUEST_BYTES:
        message = f"invoke payload is {payload_length} bytes, over {MAX_REQUEST_BYTES}"
        return ProtocolViolation(LIMIT_EXCEEDED, "", message, frame_id)
    if len(envelope["body"]["history"]) > MAX_HISTORY_ENTRIES:
        message = f"history has more than {MAX_HISTORY_ENTRIES} entries"
        return ProtocolViolation(LIMIT_EXCEEDED, "/body/history", message, frame_id)
    return None


def value_violation(envelope: dict[str, Any]) -> ProtocolViolation | None:
    """Value limits (step 6) before invalid values (step 7), each in document order."""
    errors = []
    for pointer, value in value_positions(envelope):
        try:
            validate_value(value, pointer)
        except ConversionError as exc:
            errors.append(exc)
    if not errors:
        return None
    first = next((e for e in errors if e.category == LIMIT_EXCEEDED), errors[0])
    return ProtocolViolation(first.category, first.pointer, first.reason, envelope["id"])


#: The kinds a conformance host (an SDK) receives: the server's and the bench's (§14 directions).
SDK_RECEIVES = frozenset(k.name for k in KINDS.values() if k.direction in ("S->W", "both", "B->H"))


def receiver_violation(envelope: dict[str, Any]) -> ProtocolViolation | None:
    """An idle SDK's refusal of a kind it never receives or of a server answer out of turn (§2)."""
    kind = envelope["kind"]
    if kind not in SDK_RECEIVES:
        message = f"{kind} is never sent to an SDK"
        return ProtocolViolation(UNKNOWN_VARIANT, "/kind", message, envelope["id"])
    if kind in SERVER_ANSWER_KINDS:
        message = f"{kind} out of turn: no request is open"
        return ProtocolViolation(MALFORMED, "/kind", message, envelope["id"])
    return None


def decode_frame(
    payload: bytes, known_functions: Collection[str] | None = None, *, to_sdk: bool = False
) -> dict[str, Any]:
    """Decode one frame payload through every §2 step; raise ProtocolViolation at the first
    problem, with the category and pointer a `protocol_error` answer must carry (§10.9).

    With `known_functions` (an SDK's registry), a decodable discovery for an undeclared
    function is refused too: `protocol.unknown_function` at `/body/function_id` (§11.2).
    With `to_sdk`, the frame is decoded as an idle SDK receives it: a kind only an SDK sends is
    an unknown variant and a server answer is out of turn, both at `/kind` right after step 4.
    """
    envelope = parse_envelope(payload)
    if to_sdk and (violation := receiver_violation(envelope)) is not None:
        raise violation
    try:
        violation = body_violation(envelope)
    except RecursionError:  # nested past what the schema walk handles: a value or a cause chain
        violation = value_violation(envelope) or ProtocolViolation(
            MALFORMED, "", "message nested too deeply to decode", envelope["id"]
        )
    violation = violation or limit_violation(envelope, len(payload)) or value_violation(envelope)
    if violation is not None:
        raise violation
    body = envelope["body"]
    if (
        known_functions is not None
        and envelope["kind"] == "invoke"
        and body["mode"] == "discover"
        and body["function_id"] not in known_functions
    ):
        message = f"function {body['function_id']!r} is not in the registry"
        raise ProtocolViolation(
            PROTOCOL_UNKNOWN_FUNCTION, "/body/function_id", message, envelope["id"]
        )
    return envelope
