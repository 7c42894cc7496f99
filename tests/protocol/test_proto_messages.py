"""§14 catalog and §2 envelope decoding (steps 1-4)."""

from __future__ import annotations

import json

import pytest

from fakepeer.protocol.decode import ProtocolViolation, parse_envelope
from fakepeer.protocol.encode import encode_frame, envelope, frame_templates, spelled_as
from fakepeer.protocol.messages import KINDS, REQUEST_KINDS, SERVER_ANSWER_KINDS
from fakepeer.protocol.version import KNOWN_VERSIONS


def test_catalog_examples_are_whole_envelopes_of_their_kind() -> None:
    # The list of kinds itself is checked against docs/protocol.md §14 in test_proto_catalog.py.
    for name, kind in KINDS.items():
        assert kind.name == name
        assert kind.example["kind"] == name
        assert set(kind.example) == {"version", "kind", "id", "body"}
        assert set(kind.required) <= set(kind.example["body"])
        assert set(kind.example["body"]) <= set(kind.members)


def test_directions_and_exchange_roles() -> None:
    assert KINDS["protocol_error"].direction == "both"
    assert KINDS["invoke"].direction == "S->W"
    assert KINDS["declared"].direction == "W->S"
    assert KINDS["conform.ack"].direction == "H->B"
    assert REQUEST_KINDS == {"invoke"} | {
        k for k in KINDS if k.startswith("conform.") and KINDS[k].direction in ("B->H", "both")
    }
    assert SERVER_ANSWER_KINDS == {
        "register_ack",
        "register_refused",
        "manifest_activated",
        "manifest_conflict",
        "manifest_rejected",
    }
    assert KINDS["invoke"].optional == ("target",)


def _payload(doc: object) -> bytes:
    return json.dumps(doc).encode()


def _violation(payload: bytes) -> ProtocolViolation:
    with pytest.raises(ProtocolViolation) as info:
        parse_envelope(payload)
    return info.value


def test_examples_parse() -> None:
    for kind in KINDS.values():
        assert parse_envelope(_payload(kind.example)) == kind.example


def test_minor_versions_and_unknown_members_are_accepted() -> None:
    doc = {"version": "1.7", "kind": "conform.ack", "id": "x", "body": {"z": 1}, "extra": []}
    assert parse_envelope(_payload(doc)) == doc


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"{",
        b"\xff\xfe",
        b"\xef\xbb\xbf{}",
        b'{"version":"1.0","version":"1.0","kind":"conform.ack","id":"x","body":{}}',
        b'{"version":"1.0","kind":"conform.ack","id":"x","body":{"a":NaN}}',
        b'{"version":"1.0","kind":"conform.ack","id":"\\ud800","body":{}}',
        b"[]",
        b'"text"',
        b"null",
    ],
)
def test_step_1_and_root_shape_are_malformed_at_root(payload: bytes) -> None:
    error = _violation(payload)
    assert (error.category, error.pointer) == ("protocol.malformed", "")


BASE = {"version": "1.0", "kind": "conform.ack", "id": "abc", "body": {}}
MISSING = object()


@pytest.mark.parametrize(
    ("changes", "category", "pointer"),
    [
        ({"version": MISSING}, "protocol.malformed", "/version"),
        ({"version": None}, "protocol.malformed", "/version"),
        ({"version": 1.0}, "protocol.malformed", "/version"),
        ({"version": "1"}, "protocol.malformed", "/version"),
        ({"version": "01.0"}, "protocol.malformed", "/version"),
        ({"version": "1.0\n"}, "protocol.malformed", "/version"),
        ({"version": "v1.0"}, "protocol.malformed", "/version"),
        ({"kind": 5}, "protocol.malformed", "/kind"),
        ({"kind": None}, "protocol.malformed", "/kind"),
        ({"kind": MISSING}, "protocol.malformed", "/kind"),
        ({"id": MISSING}, "protocol.malformed", "/id"),
        ({"body": MISSING}, "protocol.malformed", "/body"),
        ({"id": ""}, "protocol.malformed", "/id"),
        ({"id": "x" * 257}, "protocol.malformed", "/id"),
        ({"id": 7}, "protocol.malformed", "/id"),
        ({"body": []}, "protocol.malformed", "/body"),
        ({"body": None}, "protocol.malformed", "/body"),
        ({"version": "2.0"}, "protocol.unsupported_version", "/version"),
        ({"version": "0.9"}, "protocol.unsupported_version", "/version"),
        ({"kind": "nope"}, "protocol.unknown_variant", "/kind"),
        ({"version": "2.0", "kind": "nope"}, "protocol.unsupported_version", "/version"),
        ({"version": "x", "kind": 1}, "protocol.malformed", "/version"),
        ({"kind": 1, "id": 1}, "protocol.malformed", "/kind"),
        ({"id": "", "body": 1}, "protocol.malformed", "/id"),
        ({"kind": "nope", "body": 1}, "protocol.malformed", "/body"),
    ],
)
def test_envelope_checks_in_order(changes: dict, category: str, pointer: str) -> None:
    doc = {key: value for key, value in {**BASE, **changes}.items() if value is not MISSING}
    error = _violation(_payload(doc))
    assert (error.category, error.pointer) == (category, pointer)


def test_frame_id_is_kept_for_the_answer() -> None:
    assert _violation(_payload({**BASE, "kind": "nope"})).frame_id == "abc"
    assert _violation(_payload({**BASE, "id": ""})).frame_id is None
    assert _violation(b"{").frame_id is None
    assert _violation(_payload({**BASE, "id": "x" * 256, "body": 0})).frame_id == "x" * 256


def test_id_length_counts_characters() -> None:
    doc = {**BASE, "id": "\U0001f600" * 256}
    assert parse_envelope(json.dumps(doc, ensure_ascii=False).encode())["id"] == doc["id"]


@pytest.mark.parametrize("kind", ["conform.reset", "conform.ack", "conform.trace"])
def test_frame_templates_are_the_encoders_bytes_and_their_sorted_twin(kind: str) -> None:
    """The hot path's byte templates (session/sdk.py, session/case.py) say what encode_frame and
    an RFC 8785 writer say; `spelled_as` recognises exactly those two (and their 1.0 spelling:
    a host written against protocol 1.0 writes 1.0)."""
    ordered, sorted_, *older = frame_templates(kind)
    assert len(older) == 2 * (len(KNOWN_VERSIONS) - 1)
    for template in older:
        assert b'"version":"1.0"' in template
    assert ordered % b"x#1" == encode_frame(kind, {}, "x#1")
    assert (
        sorted_ % b"x#1"
        == json.dumps(envelope(kind, {}, "x#1"), sort_keys=True, separators=(",", ":")).encode()
    )
    assert spelled_as(sorted_ % b"x#1", (ordered, sorted_), "x#1")
    assert not spelled_as(ordered % b"x#2", (ordered, sorted_), "x#1")
    assert not spelled_as(encode_frame(kind, {"a": 1}, "x#1"), (ordered, sorted_), "x#1")
