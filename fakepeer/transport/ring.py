"""A bounded byte buffer that keeps the tail, so a flooding SDK costs at most `capacity` bytes."""

from __future__ import annotations

import threading


class RingBuffer:
    """Keeps the last `capacity` bytes written; counts the bytes it dropped."""

    def __init__(self, capacity: int = 64 * 1024) -> None:
        self.capacity = capacity
        self._data = bytearray()
        self._lock = threading.Lock()
        self.dropped = 0

    def write(self, data: bytes) -> None:
        with self._lock:
            self._data += data
            excess = len(self._data) - self.capacity
            if excess > 0:
                del self._data[:excess]
                self.dropped += excess

    def getvalue(self) -> bytes:
        with self._lock:
            return bytes(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.dropped = 0

    def text(self) -> str:
        """The tail as text, noting how much was dropped before it."""
        with self._lock:
            body = self._data.decode("utf-8", "replace")
            dropped = self.dropped
        if dropped:
            return f"[... {dropped} earlier bytes of stderr dropped ...]\n{body}"
        return body
