"""The wire log of one case: every frame sent and received, with its time since the case began."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Literal

Direction = Literal["sent", "received"]
REPORTED_PAYLOAD_BYTES = 64 * 1024
REPORTED_HEAD_BYTES = 1024


@dataclass(frozen=True)
class WireRecord:
    direction: Direction
    at: float  # seconds since the case started
    payload: bytes

    def to_json(self) -> dict:
        """`json` when the payload is JSON, else `text` when UTF-8, else `base64`.

        A payload over REPORTED_PAYLOAD_BYTES (limit tests send megabytes) is reported by its
        size, hash and first bytes only, so reports stay readable.
        """
        record: dict = {"direction": self.direction, "at": round(self.at, 6)}
        record["size"] = len(self.payload)
        if len(self.payload) > REPORTED_PAYLOAD_BYTES:
            record["sha256"] = hashlib.sha256(self.payload).hexdigest()
            record["truncated"] = True
            head = self.payload[:REPORTED_HEAD_BYTES]
            record["text"] = head.decode("utf-8", "replace")
            return record
        try:
            text = self.payload.decode("utf-8")
        except UnicodeDecodeError:
            record["base64"] = base64.b64encode(self.payload).decode("ascii")
            return record
        try:
            record["json"] = json.loads(text)
        except (ValueError, RecursionError):
            record["text"] = text
        return record


@dataclass
class WireLog:
    """Append-only; cheap enough to keep on the hot path (it stores the bytes, nothing more)."""

    started: float = field(default_factory=time.monotonic)
    records: list[WireRecord] = field(default_factory=list)

    def sent(self, payload: bytes) -> None:
        self.records.append(WireRecord("sent", time.monotonic() - self.started, payload))

    def received(self, payload: bytes) -> None:
        self.records.append(WireRecord("received", time.monotonic() - self.started, payload))
