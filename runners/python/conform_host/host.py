"""The conformance host loop (§12): framed envelopes on stdin/stdout, one frame at a time."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO

from ryusen_sdk import InvalidRegistryError, ProtocolError, RyusenError, execute
from ryusen_sdk.answers import protocol_error
from ryusen_sdk.codec import (
    BENCH_KINDS,
    Envelope,
    FrameError,
    decode_body,
    decode_envelope,
    decode_invoke,
    encode_envelope,
    is_str,
    member,
)
from ryusen_sdk.framing import BrokenStream, read_frame, write_frame
from ryusen_sdk.jsontext import pointer_join
from ryusen_sdk.worker import (
    WorkerConfig,
    negotiate,
    publication_result,
    publish_body,
    register_body,
)

from .registry import build_registry, registry_from_spec
from .trace import Trace

log = logging.getLogger("ryusen.conform")

REQUEST_KINDS = BENCH_KINDS | {"invoke"}
#: The server's answers to an SDK request (§7.2, §8.5): one of another request fails it.
SERVER_ANSWER_KINDS = frozenset(
    {
        "register_ack",
        "register_refused",
        "manifest_activated",
        "manifest_conflict",
        "manifest_rejected",
    }
)


class Shutdown(Exception):
    """The bench asked the host to exit (or closed its input)."""


class Host:
    """Plays the worker side of a session against the bench, with the conformance registry."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self.reader = reader
        self.writer = writer
        self.ambient: dict[str, str] = {}
        self.admission_open = True
        self.trace = Trace()
        self.registry = build_registry(self.ambient, self.trace)
        self.registry.validate()
        self._pushed_back: bytes | None = None

    # --- transport ----------------------------------------------------------------------------

    def send(self, kind: str, frame_id: str, body: dict[str, Any]) -> None:
        log.debug("-> %s %s", kind, frame_id)
        write_frame(self.writer, encode_envelope(kind, frame_id, body))

    def send_error(self, error: RyusenError, frame_id: str) -> None:
        answer = protocol_error(error.to_record())
        self.send(answer.kind, frame_id, answer.body)

    def next_frame(self) -> bytes:
        if self._pushed_back is not None:
            payload, self._pushed_back = self._pushed_back, None
            return payload
        payload = read_frame(self.reader)
        if payload is None:
            raise Shutdown()
        return payload

    def serve(self) -> int:
        """Serve frames until shutdown or end of input; the exit status."""
        try:
            while True:
                self.handle(self.next_frame())
        except Shutdown:
            return 0
        except BrokenStream as exc:
            log.error("broken stream: %s", exc)
            return 1

    # --- dispatch -----------------------------------------------------------------------------

    def handle(self, payload: bytes) -> None:
        try:
            envelope = decode_envelope(payload)
        except FrameError as exc:
            self.send_error(exc.error, exc.reply_id)
            return
        kind = envelope.kind
        log.debug("<- %s %s", kind, envelope.id)
        try:
            if kind == "invoke":
                request = decode_invoke(envelope, len(payload))
                answer = execute(self.registry, request, self.admission_open)
                self.send(answer.kind, envelope.id, answer.body)
            elif kind == "protocol_error":
                # A valid report is not answered (no error ping-pong); a broken one is (§10.9).
                log.warning("peer reported a protocol error: %s", decode_body(envelope))
            elif kind in REQUEST_KINDS:
                self.control(envelope, decode_body(envelope))
            else:
                raise ProtocolError("protocol.malformed", "/kind", f"{kind} out of turn")
        except ProtocolError as error:
            self.send_error(error, envelope.id)

    def control(self, envelope: Envelope, body: dict[str, Any]) -> None:
        kind, frame_id = envelope.kind, envelope.id
        if kind == "conform.shutdown":
            raise Shutdown()
        if kind == "conform.reset":
            self.ambient.clear()
            self.admission_open = True
            self.trace.clear()
            self.send("conform.ack", frame_id, {})
        elif kind == "conform.trace":
            self.send("conform.trace", frame_id, {"events": self.trace.drain()})
        elif kind == "conform.set_ambient":
            self.ambient[body["key"]] = body["value"]
            self.send("conform.ack", frame_id, {})
        elif kind == "conform.set_admission":
            self.admission_open = body["open"]
            self.send("conform.ack", frame_id, {})
        elif kind == "conform.register":
            self.register(frame_id, body)
        elif kind == "conform.publish":
            self.publish(frame_id, body)

    # --- exchanges ----------------------------------------------------------------------------

    def await_answer(self, kinds: Iterable[str]) -> tuple[str, dict[str, Any]] | None:
        """Read the server's answer to an exchange; None if the bench moved on to a request.

        An expected answer that does not decode (or a `protocol_error` from the server) comes
        back as `("failed", {"error": record})`: the outcome is `failed` (§12.3). A frame that is
        not one of the expected answers is answered with `protocol_error` and the wait goes on.
        """
        wanted = set(kinds)
        while True:
            payload = self.next_frame()
            try:
                envelope = decode_envelope(payload)
            except FrameError as exc:
                if exc.kind in wanted:
                    return "failed", {"error": exc.error.to_record()}
                self.send_error(exc.error, exc.reply_id)
                continue
            if envelope.kind in REQUEST_KINDS:
                self._pushed_back = payload
                return None
            try:
                if envelope.kind == "protocol_error":
                    return "failed", {"error": decode_body(envelope)["error"]}
                if envelope.kind in SERVER_ANSWER_KINDS and envelope.kind not in wanted:
                    # It cannot answer the open request: the exchange fails
                    # (D-SERVER-ANSWER-DECODE), nothing is registered or activated.
                    error = ProtocolError(
                        "protocol.malformed", "/kind", f"{envelope.kind} does not answer it"
                    )
                    return "failed", {"error": error.to_record()}
                if envelope.kind not in wanted:
                    raise ProtocolError(
                        "protocol.malformed", "/kind", f"{envelope.kind} unexpected"
                    )
            except ProtocolError as error:
                self.send_error(error, envelope.id)
                continue
            try:
                return envelope.kind, decode_body(envelope)
            except ProtocolError as error:
                return "failed", {"error": error.to_record()}

    def register(self, frame_id: str, body: dict[str, Any]) -> None:
        scope = body["scope"]
        config = WorkerConfig(
            workspace_id=scope["workspace_id"],
            application_id=scope["application_id"],
            instance_id=body["instance_id"],
            release_id=body["release_id"],
        )
        register = register_body(self.registry, config)
        self.send("register", frame_id, register)
        answer = self.await_answer(("register_ack", "register_refused"))
        if answer is None:
            return
        kind, reply = answer
        outcome: dict[str, Any]
        if kind == "register_refused":
            outcome = {"status": "refused", "code": reply["code"]}
        elif kind == "failed":
            outcome = {"status": "failed", "error": reply["error"]}
        else:
            try:
                registration = negotiate(reply, register["capabilities"])
            except ProtocolError as error:
                outcome = {"status": "failed", "error": error.to_record()}
            else:
                outcome = {
                    "status": "registered",
                    "version": registration.version,
                    "capabilities": registration.capabilities,
                }
        self.send("conform.registration_outcome", frame_id, outcome)

    def publish(self, frame_id: str, body: dict[str, Any]) -> None:
        registry = self.registry
        if "registry" in body:
            registry = registry_from_spec(_registry_spec(body["registry"]))
        try:
            request = publish_body(registry, body["scope"], body["expected_parent"])
        except InvalidRegistryError as error:
            outcome = {"status": "invalid", "error": error.to_record()}
            self.send("conform.publication_outcome", frame_id, outcome)
            return
        self.send("publish_manifest", frame_id, request)
        answer = self.await_answer(("manifest_activated", "manifest_conflict", "manifest_rejected"))
        if answer is None:
            return
        if answer[0] == "failed":
            outcome = {"status": "failed", "error": answer[1]["error"]}
            self.send("conform.publication_outcome", frame_id, outcome)
            return
        result = publication_result(*answer)
        if result.status == "activated":
            outcome = {
                "status": "activated",
                "application_generation": result.application_generation,
                "workspace_generation": result.workspace_generation,
            }
        elif result.status == "conflict":
            outcome = {"status": "conflict", "active_generation": result.active_generation}
        else:
            outcome = {"status": "rejected", "code": result.code}
        self.send("conform.publication_outcome", frame_id, outcome)


def _registry_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Validate the shape of a registry spec (§12.3); malformed at the offending member."""
    base = "/body/registry"
    result: dict[str, Any] = {"functions": [], "triggers": []}
    for name, members in (("functions", ("id",)), ("triggers", ("id", "event", "function"))):
        items = spec.get(name, [])
        where = pointer_join(base, name)
        if not isinstance(items, list):
            raise ProtocolError("protocol.malformed", where, f"{name} must be an array")
        for index, item in enumerate(items):
            pointer = pointer_join(where, index)
            if not isinstance(item, dict):
                raise ProtocolError("protocol.malformed", pointer, "expected an object")
            entry = {m: member(item, m, pointer, is_str) for m in members}
            if name == "functions" and item.get("timeout") is not None:
                # A duration string (§6); an integer is accepted as the typed form (ms).
                entry["timeout"] = member(item, "timeout", pointer, _is_timeout)
            result[name].append(entry)
    return result


def _is_timeout(value: Any) -> bool:
    return is_str(value) or (type(value) is int)


def serve(reader: BinaryIO, writer: BinaryIO) -> int:
    """Serve one session on the given binary streams: the bench's in-process transport calls
    this (`--sdk python:runners/python:conform_host.host:serve`)."""
    return Host(reader, writer).serve()


def serve_stdio() -> int:
    """Run the host on the process's binary stdin/stdout; logs go to stderr only (`entry.main`
    picks this or HTTP)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="conform-py: %(message)s")
    frames_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the framed stream
    host = Host(sys.stdin.buffer, frames_out)
    return host.serve()
