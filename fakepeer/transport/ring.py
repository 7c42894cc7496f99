"""A bounded byte buffer that keeps the tail, so a flooding SDK costs at most `capacity` bytes."""

from __future__ import annotations

import re
import threading

#: Control characters a terminal acts on (CSI, OSC, bell, carriage return...), C1 included;
#: tab and newline stay.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Lines a CI system reads as commands: GitHub `::error ...`, Azure `##vso[...]` / `##[...]`.
_CI_COMMAND = re.compile(r"(?m)^([ \t]*)([:#])(?=:|#vso\[|#\[)")


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
        if not self._data and not self.dropped:  # once per case: most hosts log nothing
            return
        with self._lock:
            self._data.clear()
            self.dropped = 0

    def text(self) -> str:
        """The tail as text, safe to print: noting how much was dropped before it, with control
        characters and CI command lines escaped (`\\x1b`, `\\x3a:error`), so a host's stderr
        cannot drive the terminal or the CI system that shows the bench's output."""
        with self._lock:
            body = neutralised(self._data.decode("utf-8", "replace"))
            dropped = self.dropped
        if dropped:
            return f"[... {dropped} earlier bytes of stderr dropped ...]\n{body}"
        return body


def neutralised(text: str) -> str:
    """`text` with terminal control characters and CI command prefixes written as escapes."""
    text = text.replace("\r\n", "\n")
    text = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    return _CI_COMMAND.sub(lambda match: f"{match.group(1)}\\x{ord(match.group(2)):02x}", text)
