"""An in-memory transport: a Python callable plays the SDK. For tests and for embedding.

The handler receives each payload the bench sends and returns the payloads the SDK answers with.
It may raise a TransportError to play a crash (TransportClosed) or a framing fault (FrameError).
A receive with nothing queued raises TransportTimeout at once: a hang costs no wall-clock time.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable

from fakepeer.transport.base import Transport
from fakepeer.transport.errors import TransportClosed, TransportError, TransportTimeout
from fakepeer.transport.framing import check_length
from fakepeer.transport.process import describe_exit

Handler = Callable[[bytes], Iterable[bytes]]


class MockTransport(Transport):
    """Calls `handler(payload)` for each sent frame and queues what it returns.

    It plays a host process: `exited` and `exit_note` use the subprocess transport's words.
    """

    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self.handler = handler
        self.sent: list[bytes] = []
        self.closed = False
        #: The exit status `exit_status` reports: set it to play a host that exited by itself.
        self.exited: int | None = None
        self._queue: deque[bytes] = deque()
        self._failure: TransportError | None = None

    def send(self, payload: bytes, deadline: float | None = None) -> None:
        self._check_open()
        check_length(len(payload))
        self.sent.append(payload)
        try:
            self._queue.extend(self.handler(payload))
        except TransportError as exc:
            self._failure = exc

    def receive(self, deadline: float | None = None) -> bytes:
        self._check_open()
        if self._queue:
            return self._queue.popleft()
        if self._failure is not None:
            raise self._failure
        raise TransportTimeout("sent no complete frame before the deadline")

    def ready(self) -> bool:
        """Whether `receive` would return or fail at once."""
        return bool(self._queue) or self._failure is not None or self.closed

    def exit_status(self) -> int | None:
        return self.exited

    def exit_note(self, *, hung: bool = False) -> str | None:
        return describe_exit(self.exited, hung=hung)

    def write_stderr(self, text: str) -> None:
        """Let a handler log, as a host writes to stderr."""
        self.stderr.write(text.encode())

    def close(self, wait: float = 0.0) -> None:
        self.closed = True

    def _check_open(self) -> None:
        if self.closed:
            raise TransportClosed("the mock SDK was closed")


def json_handler(answer: Callable[[dict], Iterable[dict | bytes]]) -> Handler:
    """Adapt a function of decoded envelopes to a payload handler (bytes pass as they are)."""

    def handler(payload: bytes) -> list[bytes]:
        return [
            reply if isinstance(reply, bytes) else json.dumps(reply, separators=(",", ":")).encode()
            for reply in answer(json.loads(payload))
        ]

    return handler
