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

    def __init__(self, stream: TextIO | None) -> None:
        if stream is None:  # started with standard output closed: nothing to show, no crash
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long
        self._stream = stream
        self.broken = False
        #: A write error other than a closed pipe (a full disk, a file too large): said once at
        #: the end on stderr; the reports, written before the console, are safe.
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._lose()
            return len(text)
        except (OSError, ValueError) as exc:  # ENOSPC, EFBIG, EBADF, a closed stream
            self._lose(exc)
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._lose()
        except (OSError, ValueError) as exc:
            self._lose(exc)

    def _lose(self, error: BaseException | None = None) -> None:
        """Point the descriptor at /dev/null, so the interpreter's final flush fails no more."""
        self.broken = True
        if isinstance(error, OSError) and self.error is None:
            self.error = error
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
