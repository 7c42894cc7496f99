"""An in-memory SDK for session and runner tests, built on MockTransport."""

from __future__ import annotations

import threading

from fakepeer.session import SdkTarget
from fakepeer.transport import MockTransport, TransportClosed, json_handler
from fakepeer.transport.errors import FrameError

CAPABILITIES = ["compensation", "timers"]
UNKNOWN_KIND = {
    "error": {
        "category": "protocol.unknown_variant",
        "message": "unknown kind",
        "retryable": False,
        "details": {"pointer": "/kind"},
    }
}


def register_body(capabilities: list[str]) -> dict:
    return {
        "scope": {"workspace_id": "ws-conform", "application_id": "app-conform"},
        "release": {"kind": "versioned", "id": "rel-conform-1"},
        "instance_id": "conform-instance-1",
        "manifest_hash": "sha256:" + "0" * 64,
        "functions": ["conform.echo"],
        "contract": {
            "protocol_major": 1,
            "value_codec": "ryusen.tagged/1",
            "capabilities": capabilities,
        },
        "versions": ["1.0"],
        "capabilities": capabilities,
        "capacity": {"max_concurrent": 1},
        "sdk": {"name": "mock", "version": "0", "language": "python", "runtime": "test"},
    }


class MockSdk:
    """Answers like a conformance host; `run_id` values choose misbehaviours (see `_invoke`)."""

    def __init__(
        self,
        capabilities: list[str] | None = None,
        registration: str = "registered",
        ack_kind: str = "conform.ack",
    ) -> None:
        self.capabilities = CAPABILITIES if capabilities is None else capabilities
        self.registration = registration
        self.ack_kind = ack_kind
        self.starts = 0
        self.received: list[dict] = []
        self.lock = threading.Lock()
        #: Where a `late-copy` invoke's answer is sent again: before the next case's reset ack
        #: ("reset"), before the next invoke's answer ("invoke") or after it ("after").
        self.copy_at = "reset"
        self._copy: list[dict] = []
        #: False plays a host written before §12.4: `conform.trace` is an unknown kind to it.
        self.traces = True

    def target(self, label: str = "mock") -> SdkTarget:
        return SdkTarget(label, ["mock"], self.factory)

    def factory(self) -> MockTransport:
        with self.lock:
            self.starts += 1
        transport = MockTransport(lambda payload: None)  # replaced below
        transport.handler = json_handler(lambda envelope: self._answer(transport, envelope))
        return transport

    def _answer(self, transport: MockTransport, envelope: dict) -> list[dict]:
        with self.lock:
            self.received.append(envelope)
        kind, ident, body = envelope["kind"], envelope["id"], envelope["body"]

        def reply(kind: str, body: dict, ident: str = ident) -> list[dict]:
            return [{"version": "1.0", "kind": kind, "id": ident, "body": body}]

        if kind == "conform.register":
            return reply("register", register_body(self.capabilities))
        if kind == "register_ack":
            if self.registration != "registered":
                return reply(
                    "conform.registration_outcome",
                    {"status": "refused", "code": "unauthorized_scope"},
                )
            return reply(
                "conform.registration_outcome",
                {"status": "registered", "version": "1.0", "capabilities": self.capabilities},
            )
        if kind == "register_refused":
            return reply(
                "conform.registration_outcome", {"status": "refused", "code": body["code"]}
            )
        if kind == "conform.reset":
            return self._late_copy("reset") + reply(self.ack_kind, {})
        if getattr(transport, "dead", False):  # it crashed or hangs: like a real host, it
            return []  # answers nothing after that (frames are served in order, §12.1)
        if kind == "conform.trace":  # §12.4: this mock runs no callback and catches nothing
            if not self.traces:
                return reply("protocol_error", UNKNOWN_KIND)
            return reply("conform.trace", {"events": []})
        if kind == "invoke":
            before, after = self._late_copy("invoke"), self._late_copy("after")
            return before + self._invoke(transport, body, reply) + after
        return []

    def _late_copy(self, at: str) -> list[dict]:
        """The kept copy of a `late-copy` answer, once, if this is where it goes."""
        if self.copy_at != at or not self._copy:
            return []
        copy, self._copy = self._copy, []
        return copy

    def _invoke(self, transport: MockTransport, body: dict, reply) -> list[dict]:
        run_id = body["run_id"]
        if run_id in ("crash", "framing", "hang"):
            transport.dead = True  # type: ignore[attr-defined]
        if run_id == "crash":
            transport.write_stderr("mock: crashing\n")
            raise TransportClosed("closed its output; exited with status 3")
        if run_id == "framing":
            raise FrameError("announced a frame of 4294967295 bytes (limit 16777216)")
        if run_id == "hang":
            return []
        if run_id == "wrong-id":
            return reply("completed", {"value": {"t": "null"}}, "other#1")
        if run_id == "garbage":
            return [b"not json"]  # type: ignore[list-item]
        if run_id == "wrong-value":
            return reply("completed", {"value": {"t": "str", "v": "surprise"}})
        if run_id == "schema":
            return reply("completed", {"value": 5})
        if run_id == "late-copy":  # answered now, and again during the next case
            self._copy = reply("completed", {"value": body["input"]})
            return list(self._copy)
        return reply("completed", {"value": body["input"]})
