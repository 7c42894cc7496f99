"""Standard output that survives its reader going away (`ryusen-conform run ... | head -1`).

When the reader closes the pipe, the next write raises BrokenPipeError. The run must still
write its reports and exit with its own status, so from then on output goes to /dev/null.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, TextIO


class PipeSafeStream:
    """Wraps a text stream; the first BrokenPipeError silently redirects it to /dev/null."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._lose()
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._lose()

    def _lose(self) -> None:
        """Point the descriptor at /dev/null, so the interpreter's final flush fails no more."""
        self.broken = True
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
