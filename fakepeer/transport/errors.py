"""Transport failures: each one ends the SDK session (the stream can no longer be trusted)."""

from __future__ import annotations


class TransportError(Exception):
    """The byte stream to the SDK broke; `reason` is one line for the report."""

    reason = "transport failure"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.reason)
        self.detail = detail or self.reason


class FrameError(TransportError):
    """The SDK broke framing (§1): a length of 0 or above 16 MiB, or a truncated frame."""

    reason = "broke framing"


class TransportTimeout(TransportError):
    """No complete frame before the deadline: the SDK hangs (or is far too slow)."""

    reason = "hung"


class TransportClosed(TransportError):
    """The SDK closed its end or exited."""

    reason = "crashed"


class NoAnswer(TransportTimeout):
    """Nothing more can come: a request-response endpoint answered every request sent.

    A timeout at once, not at the deadline: on HTTP no answer arrives unasked.
    """

    reason = "gave no answer"
