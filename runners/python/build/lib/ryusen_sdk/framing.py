"""§1 framing: a 4-byte big-endian length, then one UTF-8 JSON envelope."""

from __future__ import annotations

from typing import BinaryIO

MAX_FRAME = 16_777_216


class BrokenStream(Exception):
    """The peer announced a frame over 16 MiB or cut a frame short: stop reading (§1)."""


def read_frame(stream: BinaryIO) -> bytes | None:
    """Read one frame's payload; None at a clean end of input."""
    header = _read_exact(stream, 4)
    if header is None:
        return None
    length = int.from_bytes(header, "big")
    if length > MAX_FRAME:
        raise BrokenStream(f"announced frame of {length} bytes is over 16 MiB")
    payload = _read_exact(stream, length) if length else b""
    if payload is None:
        raise BrokenStream("end of input inside a frame")
    return payload


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            if chunks:
                raise BrokenStream("end of input inside a frame")
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    """Write one frame and flush, so the peer sees it at once."""
    if not 1 <= len(payload) <= MAX_FRAME:
        raise ValueError("a frame payload is 1 byte to 16 MiB")
    stream.write(len(payload).to_bytes(4, "big") + payload)
    stream.flush()
