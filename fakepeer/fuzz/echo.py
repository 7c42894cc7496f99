"""One long-lived SDK session that echoes documents through `conform.echo` (§13).

Why reuse the bench's session layer: the fuzzer then starts, registers, times out, respawns and
kills SDK hosts exactly as `ryusen-conform run` does; only the frames it sends are new.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from fakepeer.protocol.messages import envelope
from fakepeer.session.sdk import SdkSession, SessionError, decode
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError

ECHO_FUNCTION = "conform.echo"


@dataclass(frozen=True)
class EchoReply:
    """What came back for one document: the SDK's envelope, or why there was none."""

    envelope: dict | None
    broken: str = ""  # the SDK crashed, hung, wrote garbage or answered on another id


def invoke_payload(frame_id: str, doc: object) -> bytes:
    """The `invoke` frame for `conform.echo` with `doc` as input, as ASCII JSON text.

    ASCII (`\\u` escapes) so that lone surrogates, which have no UTF-8, still travel (§3.3).
    """
    body = {
        "run_id": "fuzz-run",
        "function_id": ECHO_FUNCTION,
        "mode": "discover",
        "input": doc,
        "history": [],
    }
    invoke = envelope("invoke", body, frame_id)
    return json.dumps(invoke, separators=(",", ":"), ensure_ascii=True).encode("ascii")


class EchoSession:
    """Sends one document per `echo` call; a broken SDK is discarded and restarted lazily."""

    def __init__(self, target: SdkTarget, timeout: float) -> None:
        self.target = target
        self.timeout = timeout
        self.session = SdkSession(target.factory)
        self.sent = 0

    def start(self) -> None:
        """Spawn and register the SDK now, so start-up problems surface before fuzzing."""
        self.session.ensure_started(time.monotonic() + max(self.timeout, 10.0))

    def echo(self, doc: object) -> EchoReply:
        self.sent += 1
        frame_id = f"fuzz#{self.sent}"
        deadline = time.monotonic() + self.timeout
        try:
            self.session.ensure_started(deadline)
            self.session.send(invoke_payload(frame_id, doc), deadline)
            answer = decode(self.session.receive(deadline))
        except TransportError as exc:
            return self._broken(f"{exc.reason}: {exc.detail}")
        except SessionError as exc:
            return self._broken(exc.reason)
        if answer.get("id") != frame_id:
            return self._broken(f"answered on id {answer.get('id')!r}, not {frame_id!r}")
        return EchoReply(answer)

    def _broken(self, reason: str) -> EchoReply:
        tail = self.session.discard()  # read after the kill, so the host's last words are in it
        detail = f"{reason}; stderr: {tail[-400:]}" if tail else reason
        return EchoReply(None, detail)

    def close(self) -> None:
        self.session.shutdown()
