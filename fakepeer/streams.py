"""Standard output that survives its reader going away (`ryusen-conform run ... | head -1`).

When the reader closes the pipe, the next write raises BrokenPipeError. The run must still
write its reports and exit with its own status, so from then on output goes to /dev/null.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, TextIO


class PipeSafeStream:
    """Wraps a text stream; the first BrokenPipeError silently redirects it to /dev/null.

    Code running inside the bench (an in-process host) cannot close it: `close()` only flushes,
    and when the stream underneath was closed (`sys.__stdout__.close()`), writing goes on
    through a copy of its file descriptor taken at the start."""

    def __init__(self, stream: TextIO | None) -> None:
        if stream is None:  # started with standard output closed: nothing to show, no crash
            stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long
        self._stream = stream
        self._spare: int | None = None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self._spare = os.dup(stream.fileno())  # not inherited by the hosts (PEP 446)
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
        except ValueError as exc:  # a closed stream: go on through the spare descriptor
            if self._reopen():
                return self.write(text)
            self._lose(exc)
            return len(text)
        except OSError as exc:  # ENOSPC, EFBIG, EBADF
            self._lose(exc)
            return len(text)

    def close(self) -> None:
        """Flush only: the bench's own output outlives whoever asks to close it."""
        self.flush()

    def _reopen(self) -> bool:
        """Write through the spare copy of the descriptor, once; False when there is none."""
        spare, self._spare = self._spare, None
        if spare is None or not getattr(self._stream, "closed", False):
            if spare is not None:
                os.close(spare)
            return False
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        self._stream = open(  # noqa: SIM115 - lives as long as the process
            spare, "w", encoding=encoding, errors="backslashreplace", line_buffering=True
        )
        return True

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._lose()
        except ValueError as exc:
            if not self._reopen():
                self._lose(exc)
        except OSError as exc:
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
