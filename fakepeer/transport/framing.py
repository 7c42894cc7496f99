"""Length-prefixed frames (protocol §1): 4-byte big-endian length, then that many payload bytes.

The decoder never buffers a payload it will refuse: a bad length is reported as soon as its four
bytes arrive, so a peer announcing 4 GiB costs nothing.
"""

from __future__ import annotations

import struct

from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.transport.errors import FrameError
from fakepeer.transport.ring import neutralised

HEADER = struct.Struct(">I")
HEADER_SIZE = HEADER.size
#: Bytes of a bad frame's start quoted when they are text (a banner printed on stdout).
TEXT_SAMPLE_BYTES = 120
_TEXT = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


def check_length(length: int, limit: int = MAX_FRAME_BYTES) -> None:
    """Raise FrameError unless 1 <= length <= limit."""
    if length == 0:
        raise FrameError("announced a frame of length 0")
    if length > limit:
        raise FrameError(f"announced a frame of {length} bytes (limit {limit})")


def encode_frame(payload: bytes, limit: int = MAX_FRAME_BYTES) -> bytes:
    """Return header + payload; refuse payloads over the limit.

    An empty payload is sent as a frame of length 0: a fixture's deliberate fault (§1), which
    a receiving SDK answers like any payload that is not JSON.
    """
    if payload:
        check_length(len(payload), limit)
    return HEADER.pack(len(payload)) + payload


class FrameDecoder:
    """Incremental decoder: `feed` bytes as they arrive, take complete payloads out."""

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._needed: int | None = None  # payload length of the frame being read
        self._broken: FrameError | None = None

    def feed(self, data: bytes | memoryview) -> list[bytes]:
        """Add bytes; return every payload now complete. Raises FrameError on a bad length.

        Consumed bytes are dropped from the buffer once per call, not once per frame.
        """
        if self._broken is not None:
            raise self._broken
        buffer = self._buffer
        buffer += data
        frames: list[bytes] = []
        offset, size = 0, len(buffer)
        while True:
            if self._needed is None:
                if size - offset < HEADER_SIZE:
                    break
                (length,) = HEADER.unpack_from(buffer, offset)
                try:
                    check_length(length, self.limit)
                except FrameError as exc:
                    start = bytes(buffer[offset : offset + TEXT_SAMPLE_BYTES])
                    self._broken = _explained(exc, start)
                    buffer.clear()
                    if frames:  # hand out what was good; the error comes on the next feed
                        return frames
                    raise self._broken from None
                offset += HEADER_SIZE
                self._needed = length
            end = offset + self._needed
            if end > size:
                break
            frames.append(bytes(buffer[offset:end]))
            offset, self._needed = end, None
        del buffer[:offset]
        return frames

    @property
    def pending_bytes(self) -> int:
        """Bytes held for an incomplete frame (a truncated frame at end of stream)."""
        return len(self._buffer)

    @property
    def broken(self) -> FrameError | None:
        return self._broken


def _explained(error: FrameError, start: bytes) -> FrameError:
    """When the "length" is text, say so and quote it: the host printed to stdout."""
    if len(start) < HEADER_SIZE or not all(byte in _TEXT for byte in start[:HEADER_SIZE]):
        return error
    text = start.decode("utf-8", "replace")
    cut = next((i for i, char in enumerate(text) if ord(char) < 0x20 and char != " "), None)
    line = text if cut is None else text[:cut]
    shown = neutralised(line if line.strip() else text)
    return FrameError(
        f"{error.detail}: its output starts with text, not a frame: {shown!r} "
        "(a host writes its logs to stderr; stdout carries frames only)"
    )
