"""Host exchanges (§12.3) driven in memory: outcomes for every answer the bench may send."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

from conform_host.host import Host

SCOPE = {"workspace_id": "ws-conform", "application_id": "app-conform"}


def _frame(kind: str, frame_id: str, body: dict[str, Any], version: str = "1.0") -> bytes:
    payload = json.dumps({"version": version, "kind": kind, "id": frame_id, "body": body}).encode()
    return struct.pack(">I", len(payload)) + payload


def _serve(*frames: bytes) -> tuple[int, list[dict[str, Any]]]:
    out = io.BytesIO()
    status = Host(io.BytesIO(b"".join(frames)), out).serve()
    data, answers = out.getvalue(), []
    while data:
        (length,) = struct.unpack(">I", data[:4])
        answers.append(json.loads(data[4 : 4 + length]))
        data = data[4 + length :]
    return status, answers


def _register(release_id: str | None = "rel-1") -> bytes:
    return _frame(
        "conform.register", "c#1", {"scope": SCOPE, "release_id": release_id, "instance_id": "i"}
    )


def test_refused_registration_surfaces_the_code_as_sent() -> None:
    _, answers = _serve(
        _register(), _frame("register_refused", "c#1", {"code": "new_code", "message": "m"})
    )
    assert answers[1]["body"] == {"status": "refused", "code": "new_code"}


def test_ack_that_does_not_decode_fails_the_registration() -> None:
    ack = {"version": "1.0", "capabilities": []}
    _, answers = _serve(_register(), _frame("register_ack", "c#1", ack))
    assert [a["kind"] for a in answers] == ["register", "conform.registration_outcome"]
    assert answers[1]["body"]["status"] == "failed"
    assert answers[1]["body"]["error"]["category"] == "protocol.malformed"
    assert answers[1]["body"]["error"]["details"] == {"pointer": "/body/required_capabilities"}


def test_ack_with_another_major_or_unknown_requirement_fails() -> None:
    ack = {"version": "2.0", "capabilities": [], "required_capabilities": []}
    _, answers = _serve(_register(), _frame("register_ack", "c#1", ack))
    assert answers[1]["body"]["error"]["category"] == "protocol.unsupported_version"
    ack = {"version": "1.0", "capabilities": [], "required_capabilities": ["teleport"]}
    _, answers = _serve(_register(), _frame("register_ack", "c#1", ack))
    assert answers[1]["body"]["error"]["details"] == {"pointer": "/body/required_capabilities/0"}


def test_publication_outcomes() -> None:
    publish = _frame("conform.publish", "c#2", {"scope": SCOPE, "expected_parent": None})
    activated = {
        "application_generation": "sha256:a",
        "workspace_generation": "sha256:w",
        "commit_order": 1,
    }
    _, answers = _serve(publish, _frame("manifest_activated", "c#2", activated))
    assert answers[0]["kind"] == "publish_manifest"
    assert answers[1]["body"] == {
        "status": "activated",
        "application_generation": "sha256:a",
        "workspace_generation": "sha256:w",
    }
    _, answers = _serve(
        publish,
        _frame("manifest_conflict", "c#2", {"active_generation": "sha256:x", "message": ""}),
    )
    assert answers[1]["body"] == {"status": "conflict", "active_generation": "sha256:x"}
    _, answers = _serve(
        publish,
        _frame("manifest_rejected", "c#2", {"code": "timeout_above_maximum", "message": ""}),
    )
    assert answers[1]["body"] == {"status": "rejected", "code": "timeout_above_maximum"}
    _, answers = _serve(publish, _frame("manifest_activated", "c#2", {"commit_order": 1}))
    assert answers[1]["body"]["status"] == "failed"


def test_invalid_registry_spec_is_refused_without_publishing() -> None:
    spec = {"functions": [{"id": "a", "timeout": "1h"}, {"id": "a"}], "triggers": []}
    body = {"scope": SCOPE, "expected_parent": None, "registry": spec}
    _, answers = _serve(_frame("conform.publish", "c#1", body))
    assert len(answers) == 1
    assert answers[0]["body"] == {
        "status": "invalid",
        "error": {
            "category": "sdk.invalid_registry",
            "message": answers[0]["body"]["error"]["message"],
            "retryable": False,
            "details": {"code": "duplicate_function_id"},
        },
    }


def test_admission_and_ambient_and_shutdown() -> None:
    invoke = {
        "run_id": "r",
        "function_id": "conform.echo",
        "mode": "forward",
        "input": {"t": "null"},
        "history": [],
        "target": {
            "run_id": "r",
            "step_id": "a",
            "phase": "forward",
            "attempt": 3,
            "operation_id": "op",
            "fencing_generation": "18446744073709551615",
        },
    }
    status, answers = _serve(
        _frame("conform.set_admission", "c#1", {"open": False}),
        _frame("invoke", "c#2", invoke),
        _frame("conform.reset", "c#3", {}),
        _frame("invoke", "c#4", invoke),
        _frame("conform.shutdown", "c#5", {}),
        _frame("conform.reset", "never", {}),
    )
    assert status == 0
    assert [a["kind"] for a in answers] == [
        "conform.ack",
        "rejected_before_start",
        "conform.ack",
        "target_not_found",
    ]
    assert answers[1]["body"] == {
        "request_id": "c#2",
        "attempt": 3,
        "fencing_generation": "18446744073709551615",
        "reason": {
            "code": "admission_refused",
            "message": "admission is closed",
            "retryable": True,
        },
    }


def test_frames_in_the_wrong_direction_and_bad_ids() -> None:
    _, answers = _serve(
        _frame("completed", "c#1", {"value": {"t": "null"}}),
        _frame("conform.reset", "", {}),
        _frame(
            "register_ack",
            "c#3",
            {"version": "1.0", "capabilities": [], "required_capabilities": []},
        ),
    )
    assert [
        (a["kind"], a["id"], a["body"]["error"]["category"], a["body"]["error"]["details"])
        for a in answers
    ] == [
        ("protocol_error", "c#1", "protocol.unknown_variant", {"pointer": "/kind"}),
        ("protocol_error", "-", "protocol.malformed", {"pointer": "/id"}),
        ("protocol_error", "c#3", "protocol.malformed", {"pointer": "/kind"}),
    ]


def test_an_oversized_frame_breaks_the_stream() -> None:
    status, answers = _serve(struct.pack(">I", 16_777_217))
    assert (status, answers) == (1, [])


def test_register_configuration_must_give_non_empty_identities() -> None:
    for body in (
        {"scope": SCOPE, "release_id": "", "instance_id": "i"},
        {"scope": SCOPE, "release_id": None, "instance_id": ""},
    ):
        _, answers = _serve(_frame("conform.register", "c#1", body))
        assert [a["kind"] for a in answers] == ["protocol_error"]
        assert answers[0]["body"]["error"]["category"] == "protocol.malformed"


def test_a_stray_frame_during_an_exchange_is_answered_and_the_wait_goes_on() -> None:
    ack = {"version": "1.0", "capabilities": [], "required_capabilities": []}
    _, answers = _serve(
        _register(),
        b"\x00\x00\x00\x01{",
        _frame("register_ack", "c#1", ack),
    )
    assert [(a["kind"], a["id"]) for a in answers] == [
        ("register", "c#1"),
        ("protocol_error", "-"),
        ("conform.registration_outcome", "c#1"),
    ]
    assert answers[-1]["body"]["status"] == "registered"


def test_a_server_answer_of_another_kind_fails_the_open_exchange() -> None:
    """D-SERVER-ANSWER-DECODE: a `manifest_activated` cannot answer `register`, so the
    registration fails at `/kind` (it is not answered and waited past)."""
    _, answers = _serve(_register(), _frame("manifest_activated", "c#1", {}))
    assert [(a["kind"], a["id"]) for a in answers] == [
        ("register", "c#1"),
        ("conform.registration_outcome", "c#1"),
    ]
    outcome = answers[-1]["body"]
    assert outcome["status"] == "failed"
    assert outcome["error"]["category"] == "protocol.malformed"
    assert outcome["error"]["details"] == {"pointer": "/kind"}
