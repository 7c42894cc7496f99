"""The payload of a send that carries an HTTP fault (D-HTTP-*), apart from the HTTP transport:
the fixture loader builds it (and the fixture cache unpickles it) without importing http.client."""

from __future__ import annotations


class HttpPayload(bytes):
    """A payload with the fault the transport commits when it sends it (framed: plain bytes)."""

    fault: str

    def __new__(cls, payload: bytes, fault: str) -> HttpPayload:
        self = super().__new__(cls, payload)
        self.fault = fault
        return self

    def __reduce__(self) -> tuple[type, tuple[bytes, str]]:
        """Pickled with its fault (the fixture cache stores loaded steps)."""
        return (HttpPayload, (bytes(self), self.fault))
