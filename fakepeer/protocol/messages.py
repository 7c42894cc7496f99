"""The message catalog (docs/protocol.md §14): one row per kind, data only.

`KINDS` is the single list of kinds the bench knows: schemas, the fake peer and the fixture
runner all read it. A row (message_kind.py) names the kind, its direction and section, its role
in an exchange, where its tagged values sit and an example; the body's JSON Schema is in
shapes.py. Frames are encoded by encode.py and decoded by decode.py.
"""

from __future__ import annotations

from typing import Final

from fakepeer.protocol.encode import envelope
from fakepeer.protocol.message_kind import MessageKind
from fakepeer.protocol.version import CAPABILITIES, PROTOCOL_VERSION

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
