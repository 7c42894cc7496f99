"""What a correct SDK answers to an echoed document: the same value, or the right refusal."""

from __future__ import annotations

import json

from fakepeer.fuzz.echo import EchoReply
from fakepeer.fuzz.strategies import FuzzCase
from fakepeer.protocol.canonical import CanonicalizationError, canonical_bytes
from fakepeer.protocol.schema import validate_message

INPUT_POINTER = "/body/input"


def expected_error(case: FuzzCase) -> dict:
    """The §10.9 error record a malformed case must be refused with (message not compared)."""
    return {
        "category": case.category,
        "retryable": False,
        "details": {"pointer": INPUT_POINTER + case.pointer},
    }


def problem(case: FuzzCase, reply: EchoReply) -> str | None:
    """None when the SDK answered correctly, else one line saying what is wrong."""
    if reply.envelope is None:
        return f"the SDK broke: {reply.broken}"
    kind, body = reply.envelope.get("kind"), reply.envelope.get("body")
    if not isinstance(body, dict):
        return f"a {kind!r} frame without an object body"
    violations = validate_message(_checked_part(case, reply.envelope))
    if violations:
        return f"the {kind!r} answer violates its message schema: {violations[0]}"
    if case.portable:
        if kind != "completed":
            return f"a portable value was answered {kind!r}, not completed: {_short(body)}"
        return _compare_values(case.doc, body.get("value"))
    if kind != "protocol_error":
        return f"a malformed value ({case.defect}) was answered {kind!r}, not protocol_error"
    error = body.get("error")
    if not isinstance(error, dict):
        return "a protocol_error without an error record"
    wanted = expected_error(case)
    got = {key: error.get(key) for key in wanted}
    if got != wanted:
        return f"refused with {got}, expected {wanted} ({case.defect})"
    return None


#: Stands in for an echoed value equal to the portable one sent (see `_checked_part`).
_VALID_VALUE = {"t": "null"}


def _checked_part(case: FuzzCase, envelope: dict) -> dict:
    """The envelope whose schema must hold, its echoed value replaced when that value is the very
    portable document sent (valid by construction, tests/fuzz/test_fuzz_strategies.py): the
    schema's full check of a value the fast test cannot clear (any blob) costs 80 ms."""
    body = envelope.get("body")
    if not case.portable or envelope.get("kind") != "completed" or not isinstance(body, dict):
        return envelope
    if "value" not in body or _sorted_text(body["value"]) != _sorted_text(case.doc):
        return envelope
    return {**envelope, "body": {**body, "value": _VALID_VALUE}}


def _compare_values(sent: object, received: object) -> str | None:
    if _sorted_text(received) == _sorted_text(sent):
        return None  # the same JSON values, so the same canonical bytes (1 MiB values: faster)
    try:
        if canonical_bytes(received) == canonical_bytes(sent):
            return None
    except CanonicalizationError as exc:
        return f"the echoed value has no canonical encoding: {exc}"
    return f"the echoed value differs: sent {_short(sent)}, got {_short(received)}"


def _sorted_text(document: object) -> str:
    """JSON text with sorted keys: equal only for the same JSON values (`true` is not `1`)."""
    return json.dumps(document, sort_keys=True, ensure_ascii=True)


def _short(document: object, limit: int = 300) -> str:
    text = json.dumps(document, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "..."
