"""What the session layer needs from a transport: send a payload, receive one, close, stderr."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Transport(Protocol):
    """One framed, bidirectional connection to one SDK.

    Deadlines are absolute `time.monotonic()` values (None: wait forever). Any failure raises a
    TransportError subclass, after which the transport is unusable and must be closed.
    """

    def send(self, payload: bytes, deadline: float | None = None) -> None: ...

    def send_many(self, payloads: Sequence[bytes], deadline: float | None = None) -> None: ...

    def receive(self, deadline: float | None = None) -> bytes: ...

    def ready(self) -> bool:
        """Whether `receive` would return or fail at once (optional: sessions check for it)."""
        ...

    def exit_status(self) -> int | None:
        """The host's own exit status once it exited, else None (optional: sessions check)."""
        ...

    def close(self) -> None: ...

    def stderr_tail(self) -> str: ...
