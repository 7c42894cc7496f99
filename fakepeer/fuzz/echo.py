"""One long-lived SDK session that echoes documents through `conform.echo` (§13).

Why reuse the bench's session layer: the fuzzer then starts, registers, times out, respawns and
kills SDK hosts exactly as `ryusen-conform run` does; only the frames it sends are new.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from fakepeer.protocol.encode import envelope
from fakepeer.session.sdk import SdkSession, SessionError, decode
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError

ECHO_FUNCTION = "conform.echo"
#: Documents in flight together: at most this many frames and bytes per write (the frame limit
#: of an invoke is 4 MiB, §4.3; the SDK's answers are drained while the batch is written).
BATCH_FRAMES = 64
BATCH_BYTES = 1 << 20


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

    def echo_many(self, docs: Sequence[object]) -> list[EchoReply | None]:
        """Echo documents many per round trip; None for one left unanswered by a break.

        A host serves its frames one at a time, in order (§12.1), so a batch is written at once
        and its answers read in order. When the SDK breaks inside a batch, which document broke
        it is unknown: that one and the rest of the batch get None (echo them one by one).
        """
        frames = []
        for doc in docs:
            self.sent += 1
            frame_id = f"fuzz#{self.sent}"
            frames.append((frame_id, invoke_payload(frame_id, doc)))
        replies: list[EchoReply | None] = []
        for batch in _batches(frames):
            replies.extend(self._echo_batch(batch))
        return replies

    def _echo_batch(self, frames: list[tuple[str, bytes]]) -> list[EchoReply | None]:
        replies: list[EchoReply | None] = []
        try:
            self.session.ensure_started(time.monotonic() + self.timeout)
            for _, payload in frames:
                self.session.send(payload, time.monotonic() + self.timeout)
            for frame_id, _ in frames:
                answer = decode(self.session.receive(time.monotonic() + self.timeout))
                if answer.get("id") != frame_id:
                    break
                replies.append(EchoReply(answer))
        except (TransportError, SessionError):
            pass
        if len(replies) < len(frames):
            self.session.discard()
            replies.extend([None] * (len(frames) - len(replies)))
        return replies

    def _broken(self, reason: str) -> EchoReply:
        tail = self.session.discard()  # read after the kill, so the host's last words are in it
        detail = f"{reason}; stderr: {tail[-400:]}" if tail else reason
        return EchoReply(None, detail)

    def close(self) -> None:
        self.session.shutdown()


def _batches(frames: list[tuple[str, bytes]]) -> list[list[tuple[str, bytes]]]:
    """Consecutive runs of frames within `BATCH_FRAMES` and `BATCH_BYTES` (at least one each)."""
    batches: list[list[tuple[str, bytes]]] = []
    size = 0
    for frame in frames:
        if not batches or len(batches[-1]) >= BATCH_FRAMES or size + len(frame[1]) > BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(frame)
        size += len(frame[1])
    return batches
