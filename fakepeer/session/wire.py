"""The wire log of one case: every frame sent and received, with its time since the case began."""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from fakepeer.protocol import strictjson

Direction = Literal["sent", "received"]
REPORTED_PAYLOAD_BYTES = 64 * 1024
REPORTED_HEAD_BYTES = 1024


class WireRecord(NamedTuple):
    """One frame. A payload over REPORTED_PAYLOAD_BYTES is kept as its first bytes,
    its size and hash only (`capture`), so a host answering 16 MiB frames costs little.

    A named tuple, not a frozen dataclass: six are made per case on the hot path, and a frozen
    dataclass sets each field through `object.__setattr__` (about 15 times the cost).
    """

    direction: Direction
    at: float  # seconds since the case started
    payload: bytes
    #: For a truncated payload: its full size and SHA-256 (hex); `payload` is then its head.
    size: int = -1
    sha256: str = ""

    @classmethod
    def capture(cls, direction: Direction, at: float, payload: bytes) -> WireRecord:
        if len(payload) <= REPORTED_PAYLOAD_BYTES:
            return cls(direction, at, payload)
        digest = hashlib.sha256(payload).hexdigest()
        return cls(direction, at, payload[:REPORTED_HEAD_BYTES], len(payload), digest)

    def to_json(self) -> dict:
        """`json` when the payload is JSON, else `text` when UTF-8, else `base64`.

        A payload over REPORTED_PAYLOAD_BYTES (limit tests send megabytes) is reported by its
        size, hash and first bytes only, so reports stay readable.
        """
        record: dict = {"direction": self.direction, "at": round(self.at, 6)}
        if self.sha256 or len(self.payload) > REPORTED_PAYLOAD_BYTES:
            record["size"] = self.size if self.sha256 else len(self.payload)
            record["sha256"] = self.sha256 or hashlib.sha256(self.payload).hexdigest()
            record["truncated"] = True
            head = self.payload[:REPORTED_HEAD_BYTES]
            record["text"] = head.decode("utf-8", "replace")
            return record
        record["size"] = len(self.payload)
        try:
            text = self.payload.decode("utf-8")
        except UnicodeDecodeError:
            record["base64"] = base64.b64encode(self.payload).decode("ascii")
            return record
        try:  # strict: a frame refused as garbage (NaN, too deep...) is shown as its text
            record["json"] = strictjson.loads(text)
        except ValueError:
            record["text"] = text
        return record


@dataclass
class WireLog:
    """Append-only; cheap enough to keep on the hot path (it stores the bytes, nothing more)."""

    started: float = field(default_factory=time.monotonic)
    records: list[WireRecord] = field(default_factory=list)
    #: `time.monotonic()` once the case's host was up (a start or restart is not the host's pace
    #: of answering, which the late-frame window scales with); None until then.
    ready: float | None = None
    #: The ids of the exchanges the bench opened or answered in this case (`SdkSession.send`):
    #: a stray frame carrying one of them belongs to this case.
    ids: list[str] = field(default_factory=list)

    def sent(self, payload: bytes) -> None:
        # a sent frame is built when its case runs (cases/model.Fixture.steps), so a large one
        # is kept as its head, size and hash too: the last cases' logs (kept to attribute a
        # late answer) would otherwise hold a 4 MiB frame each
        at = time.monotonic() - self.started
        if len(payload) <= REPORTED_PAYLOAD_BYTES:  # `capture`, inlined for the common case
            self.records.append(_record(WireRecord, ("sent", at, payload, -1, "")))
        else:
            self.records.append(WireRecord.capture("sent", at, payload))

    def received(self, payload: bytes) -> None:
        at = time.monotonic() - self.started
        if len(payload) <= REPORTED_PAYLOAD_BYTES:
            self.records.append(_record(WireRecord, ("received", at, payload, -1, "")))
        else:
            self.records.append(WireRecord.capture("received", at, payload))


#: A record from all its fields at C speed (a named tuple's own constructor is Python code).
_record = tuple.__new__
