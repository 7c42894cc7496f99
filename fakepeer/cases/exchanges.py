"""Exchange-id assignment (docs/fixtures.md "Identifiers").

A send of a request kind opens a new exchange `<fixture id>#<n>`; a send of a server answer kind
reuses the current exchange; an expect must see the current exchange id. Kinds that are neither
(an unknown kind, a worker kind sent the wrong way) are treated like requests: the SDK answers
them on their own id, as §10.9 says it answers any frame it cannot decode.
"""

from __future__ import annotations

# The server answers of §14 come from the catalog (`server_answer=True`).
from fakepeer.protocol.frame_json import loads_lenient
from fakepeer.protocol.limits import MAX_ID_CHARS
from fakepeer.protocol.messages import SERVER_ANSWER_KINDS

NO_USABLE_ID = "-"


class ExchangeCounter:
    """Tracks the current exchange id while walking one fixture's steps."""

    def __init__(self, fixture_id: str) -> None:
        self.fixture_id = fixture_id
        self.opened = 0
        self.current: str | None = None
        #: The exchange a server answer with its own `id` interrupted (a refused answer on
        #: `"-"`, say): the next server answer without one returns to it.
        self.interrupted: str | None = None

    def for_send(self, kind: str, explicit_id: str | None) -> str:
        """The id an envelope send carries; a request kind opens a new exchange.

        A server answer carries the current exchange's id, or its own `id`: then the expects
        that follow read that id, and the next server answer without one returns to the
        exchange it interrupted (an HTTP refusal comes on `"-"`, D-HTTP-AUTH).
        """
        if kind in SERVER_ANSWER_KINDS:
            if explicit_id is not None:
                if self.interrupted is None:
                    self.interrupted = self.current
                self.current = explicit_id
                return explicit_id
            if self.interrupted is not None:
                self.current, self.interrupted = self.interrupted, None
            return self.current if self.current is not None else self._open()
        self.interrupted = None
        self._open()
        if explicit_id is not None:
            self.current = explicit_id
        return self.current  # type: ignore[return-value]

    def for_raw(self, payload: bytes) -> str:
        """A raw frame opens an exchange answered on its own string id, or `"-"` (§10.9)."""
        self.opened += 1
        self.interrupted = None
        self.current = usable_id(payload)
        return self.current

    def for_expect(self) -> str:
        return self.current if self.current is not None else NO_USABLE_ID

    def _open(self) -> str:
        self.opened += 1
        self.current = f"{self.fixture_id}#{self.opened}"
        return self.current


def usable_id(payload: bytes) -> str:
    """The `id` an SDK must echo for a raw frame: its `id` when that is a valid id (§2: a string
    of 1 to 256 code points), else `"-"`, also when the frame fails decoding step 1 (§10.9)."""
    try:
        document, _ = loads_lenient(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return NO_USABLE_ID
    ident = document.get("id") if isinstance(document, dict) else None
    if isinstance(ident, str) and 1 <= len(ident) <= MAX_ID_CHARS:
        return ident
    return NO_USABLE_ID
