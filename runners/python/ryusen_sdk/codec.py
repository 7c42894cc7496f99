"""Decoding and encoding envelopes (§2, §9.1, §14) in the §2 decoding order.

Every refusal is a `ProtocolError` carrying the JSON pointer of the offence; `FrameError` adds
the `id` the answer must carry (the frame's string `id`, or `"-"`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import rfc8785

from .answers import Target
from .errors import CATEGORY_PATTERN, ProtocolError
from .invocation import InvokeRequest
from .jsontext import JsonTextError, has_lone_surrogate, parse, pointer_join
from .values import U64_MAX, Refused, check_limits, decode_quickly, from_tagged, parse_int_text
from .workflow import HistoryEntry

PROTOCOL_VERSION = "1.1"
PROTOCOL_MAJOR = 1
NO_ID = "-"
MAX_INVOKE_BYTES = 4_194_304
MAX_HISTORY = 1024
MAX_VALUE_BYTES = 1_048_576
SMALL_INT_MAX = 2**31 - 1

VERSION_PATTERN = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")

WORKER_KINDS = frozenset(
    {
        "register",
        "publish_manifest",
        "declared",
        "completed",
        "failed",
        "definition_blocked",
        "step_completed",
        "step_failed",
        "compensation_completed",
        "compensation_failed",
        "target_not_found",
        "rejected_before_start",
    }
)
SERVER_KINDS = frozenset(
    {
        "register_ack",
        "register_refused",
        "manifest_activated",
        "manifest_conflict",
        "manifest_rejected",
        "invoke",
        "protocol_error",
    }
)
BENCH_KINDS = frozenset(
    {
        "conform.reset",
        "conform.register",
        "conform.publish",
        "conform.set_ambient",
        "conform.set_admission",
        "conform.shutdown",
        "conform.trace",
    }
)
HOST_KINDS = frozenset(
    {
        "conform.ack",
        "conform.registration_outcome",
        "conform.publication_outcome",
        "conform.trace",
    }
)
ALL_KINDS = WORKER_KINDS | SERVER_KINDS | BENCH_KINDS | HOST_KINDS
# What an SDK (inside a conformance host) can receive; anything else is the wrong direction.
RECEIVABLE_KINDS = SERVER_KINDS | BENCH_KINDS


@dataclass(frozen=True)
class Envelope:
    """A decoded envelope (§2): unknown members already dropped."""

    version: str
    kind: str
    id: str
    body: dict[str, Any]


class FrameError(Exception):
    """A frame that does not decode: answer `protocol_error` on `reply_id` (§10.9)."""

    def __init__(self, error: ProtocolError, reply_id: str, kind: str | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.reply_id = reply_id
        self.kind = kind  # the frame's `kind` when it had a string one, for exchanges


def _malformed(pointer: str, message: str) -> ProtocolError:
    return ProtocolError("protocol.malformed", pointer, message)


def _reply_id(document: object) -> str:
    if isinstance(document, dict):
        frame_id = document.get("id")
        valid = isinstance(frame_id, str) and 1 <= len(frame_id) <= 256
        if valid and not has_lone_surrogate(frame_id):
            return frame_id
    return NO_ID


def version_major(text: object) -> int | None:
    """The major of a `MAJOR.MINOR` text, or None when it does not match the grammar."""
    if not isinstance(text, str) or not VERSION_PATTERN.fullmatch(text):
        return None
    return int(text.split(".", 1)[0])


def decode_envelope(payload: bytes, receivable: frozenset[str] = RECEIVABLE_KINDS) -> Envelope:
    """Steps (1)-(4) of the §2 decoding order."""
    try:
        document = parse(payload)
    except JsonTextError as exc:
        raise FrameError(_malformed("", f"not one UTF-8 JSON text: {exc}"), NO_ID) from None
    reply_id = _reply_id(document)
    raw_kind = document.get("kind") if isinstance(document, dict) else None
    try:
        if not isinstance(document, dict):
            raise _malformed("", "an envelope is a JSON object")
        version = document.get("version")
        if version_major(version) is None:
            raise _malformed("/version", "version must be MAJOR.MINOR")
        kind = document.get("kind")
        if not isinstance(kind, str):
            raise _malformed("/kind", "kind must be a string")
        frame_id = document.get("id")
        if not isinstance(frame_id, str) or not 1 <= len(frame_id) <= 256:
            raise _malformed("/id", "id must be a string of 1 to 256 characters")
        if has_lone_surrogate(frame_id):
            raise _malformed("/id", "id must be valid Unicode")
        body = document.get("body")
        if not isinstance(body, dict):
            raise _malformed("/body", "body must be an object")
        if version_major(version) != PROTOCOL_MAJOR:
            raise ProtocolError(
                "protocol.unsupported_version", "/version", f"{version} unsupported"
            )
        if kind not in ALL_KINDS or kind not in receivable:
            raise ProtocolError("protocol.unknown_variant", "/kind", f"unknown kind {kind!r}")
    except ProtocolError as error:
        kind_text = raw_kind if isinstance(raw_kind, str) else None
        raise FrameError(error, reply_id, kind_text) from None
    return Envelope(version, kind, frame_id, body)  # type: ignore[arg-type]


def encode_envelope(kind: str, frame_id: str, body: dict[str, Any]) -> bytes:
    """One outgoing envelope as canonical UTF-8 JSON."""
    return rfc8785.dumps({"version": PROTOCOL_VERSION, "kind": kind, "id": frame_id, "body": body})


# --- member checks ----------------------------------------------------------------------------


def member(body: dict[str, Any], name: str, pointer: str, check: Callable[[Any], bool]) -> Any:
    """A required member of the right JSON type, or `protocol.malformed` at its pointer."""
    if name not in body:
        raise _malformed(pointer_join(pointer, name), f"missing member {name}")
    value = body[name]
    if not check(value):
        raise _malformed(pointer_join(pointer, name), f"member {name} has the wrong type")
    return value


def is_str(value: Any) -> bool:
    return isinstance(value, str) and not has_lone_surrogate(value)


def is_nonempty_str(value: Any) -> bool:
    return is_str(value) and value != ""


def is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def is_small_int(value: Any) -> bool:
    return type(value) is int and 0 <= value <= SMALL_INT_MAX


def is_object(value: Any) -> bool:
    return isinstance(value, dict)


def is_str_or_null(value: Any) -> bool:
    return value is None or is_str(value)


def string_array(body: dict[str, Any], name: str, pointer: str) -> list[str]:
    """A required array of strings; a non-string element is malformed at its own pointer."""
    items = member(body, name, pointer, lambda v: isinstance(v, list))
    where = pointer_join(pointer, name)
    for index, item in enumerate(items):
        if not is_str(item):
            raise _malformed(pointer_join(where, index), "expected a string")
    return list(items)


def error_record(value: Any, pointer: str, depth: int = 0) -> dict[str, Any]:
    """Validate a §5.1 error record; return it with unknown members dropped."""
    if not isinstance(value, dict):
        raise _malformed(pointer, "an error record is an object")
    category = member(value, "category", pointer, is_str)
    if not CATEGORY_PATTERN.fullmatch(category):
        raise _malformed(pointer_join(pointer, "category"), "not a stable category")
    message = member(value, "message", pointer, is_str)
    retryable = member(value, "retryable", pointer, is_bool)
    details = member(value, "details", pointer, is_object)
    for key, item in details.items():
        if not is_str(key) or not is_str(item):
            raise _malformed(pointer_join(pointer_join(pointer, "details"), key), "not a string")
    record: dict[str, Any] = {
        "category": category,
        "message": message,
        "retryable": retryable,
        "details": dict(details),
    }
    if "cause" in value:
        if depth > 64:
            raise _malformed(pointer_join(pointer, "cause"), "cause chain too deep")
        record["cause"] = error_record(value["cause"], pointer_join(pointer, "cause"), depth + 1)
    return record


# --- invoke -----------------------------------------------------------------------------------

MODES = ("discover", "forward", "compensate")
PHASE_OF_MODE = {"forward": "forward", "compensate": "compensation"}


def decode_invoke(envelope: Envelope, payload_size: int) -> InvokeRequest:
    """Steps (5)-(7) of the §2 decoding order for an `invoke` (§9.1, §4.3, §3.4)."""
    body = envelope.body
    run_id = member(body, "run_id", "/body", is_nonempty_str)
    function_id = member(body, "function_id", "/body", is_str)
    mode = member(body, "mode", "/body", is_str)
    if mode not in MODES:
        raise ProtocolError("protocol.unknown_variant", "/body/mode", f"unknown mode {mode!r}")
    if "input" not in body:
        raise _malformed("/body/input", "missing member input")
    raw_history = member(body, "history", "/body", lambda v: isinstance(v, list))
    entries = _history_shape(raw_history)
    target = _target(body, run_id, mode) if mode != "discover" else None

    # (6) limits
    if payload_size > MAX_INVOKE_BYTES:
        raise ProtocolError("protocol.limit_exceeded", "", "invoke frame larger than 4 MiB")
    if len(raw_history) > MAX_HISTORY:
        raise ProtocolError("protocol.limit_exceeded", "/body/history", "more than 1024 entries")
    check_size = payload_size > MAX_VALUE_BYTES
    try:  # the common case: every value valid and within limits, decoded once, no pointers
        if check_size:
            raise Refused()
        input_value = decode_quickly(body["input"])
        history: dict[str, HistoryEntry] = {}
        for step_id, status, raw in entries:
            if status == "completed":
                history[step_id] = HistoryEntry("completed", value=decode_quickly(raw))
            else:
                history[step_id] = HistoryEntry("failed", error=raw)
    except Refused:  # something is refused: the §2 order decides which refusal, and where
        input_value, history = _decode_values(body["input"], entries, check_size)
    return InvokeRequest(envelope.id, run_id, function_id, mode, input_value, history, target)


def _decode_values(
    raw_input: Any, entries: list[tuple[str, str, Any]], check_size: bool
) -> tuple[Any, dict[str, HistoryEntry]]:
    """Steps (6) and (7) one value at a time, so the first refusal names its pointer."""
    check_limits(raw_input, "/body/input", check_size)
    for index, (_, status, raw) in enumerate(entries):
        if status == "completed":
            check_limits(raw, f"/body/history/{index}/value", check_size)
    # (7) tagged values, in document order
    input_value = from_tagged(raw_input, "/body/input")
    history: dict[str, HistoryEntry] = {}
    for index, (step_id, status, raw) in enumerate(entries):
        if status == "completed":
            value = from_tagged(raw, f"/body/history/{index}/value")
            history[step_id] = HistoryEntry("completed", value=value)
        else:
            history[step_id] = HistoryEntry("failed", error=raw)
    return input_value, history


def _history_shape(raw_history: list[Any]) -> list[tuple[str, str, Any]]:
    entries: list[tuple[str, str, Any]] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw_history):
        pointer = f"/body/history/{index}"
        if not isinstance(entry, dict):
            raise _malformed(pointer, "a history entry is an object")
        step_id = member(entry, "step_id", pointer, is_str)
        status = member(entry, "status", pointer, is_str)
        if status not in ("completed", "failed"):
            raise ProtocolError(
                "protocol.unknown_variant", f"{pointer}/status", f"unknown status {status!r}"
            )
        if status == "completed":
            if "value" not in entry:
                raise _malformed(f"{pointer}/value", "missing member value")
            payload = entry["value"]
        else:
            if "error" not in entry:
                raise _malformed(f"{pointer}/error", "missing member error")
            payload = error_record(entry["error"], f"{pointer}/error")
        if step_id in seen:
            raise _malformed(f"{pointer}/step_id", f"step {step_id!r} appears twice in history")
        seen.add(step_id)
        entries.append((step_id, status, payload))
    return entries


def _target(body: dict[str, Any], run_id: str, mode: str) -> Target:
    raw = member(body, "target", "/body", is_object)
    pointer = "/body/target"
    target_run = member(raw, "run_id", pointer, is_str)
    if target_run != run_id:
        raise _malformed("/body/target/run_id", "the target's run_id differs from the body's")
    step_id = member(raw, "step_id", pointer, is_str)
    phase = member(raw, "phase", pointer, is_str)
    if phase not in ("forward", "compensation"):
        raise ProtocolError("protocol.unknown_variant", "/body/target/phase", "unknown phase")
    if phase != PHASE_OF_MODE[mode]:
        raise _malformed("/body/target/phase", f"phase {phase} does not match mode {mode}")
    attempt = member(raw, "attempt", pointer, lambda v: is_small_int(v) and v >= 1)
    operation_id = member(raw, "operation_id", pointer, is_nonempty_str)
    fencing = member(
        raw, "fencing_generation", pointer, lambda v: parse_int_text(v, 0, U64_MAX) is not None
    )
    return Target(target_run, step_id, phase, attempt, operation_id, fencing)


# --- other kinds ------------------------------------------------------------------------------


def scope(body: dict[str, Any], pointer: str) -> dict[str, str]:
    """A `{workspace_id, application_id}` scope of non-empty strings."""
    raw = member(body, "scope", pointer, is_object)
    where = pointer_join(pointer, "scope")
    return {
        "workspace_id": member(raw, "workspace_id", where, is_nonempty_str),
        "application_id": member(raw, "application_id", where, is_nonempty_str),
    }


def decode_body(envelope: Envelope) -> dict[str, Any]:
    """Validate the body of a non-invoke kind the SDK or host acts on; return known members."""
    body, kind, p = envelope.body, envelope.kind, "/body"
    if kind == "register_ack":
        version = member(body, "version", p, is_str)
        return {
            "version": version,
            "capabilities": string_array(body, "capabilities", p),
            "required_capabilities": string_array(body, "required_capabilities", p),
        }
    if kind in ("register_refused", "manifest_rejected"):
        return {
            "code": member(body, "code", p, is_str),
            "message": member(body, "message", p, is_str),
        }
    if kind == "manifest_activated":
        return {
            "application_generation": member(body, "application_generation", p, is_str),
            "workspace_generation": member(body, "workspace_generation", p, is_str),
            "commit_order": member(body, "commit_order", p, is_small_int),
        }
    if kind == "manifest_conflict":
        return {
            "active_generation": member(body, "active_generation", p, is_str_or_null),
            "message": member(body, "message", p, is_str),
        }
    if kind == "protocol_error":
        return {"error": error_record(member(body, "error", p, is_object), "/body/error")}
    if kind == "conform.register":
        return {
            "scope": scope(body, p),
            "release_id": member(body, "release_id", p, lambda v: v is None or is_nonempty_str(v)),
            "instance_id": member(body, "instance_id", p, is_nonempty_str),
        }
    if kind == "conform.publish":
        result = {
            "scope": scope(body, p),
            "expected_parent": member(body, "expected_parent", p, is_str_or_null),
        }
        if "registry" in body:
            result["registry"] = member(body, "registry", p, is_object)
        return result
    if kind == "conform.set_ambient":
        return {"key": member(body, "key", p, is_str), "value": member(body, "value", p, is_str)}
    if kind == "conform.set_admission":
        return {"open": member(body, "open", p, is_bool)}
    return {}
