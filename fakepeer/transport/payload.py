"""The payload of a send that carries an HTTP fault (D-HTTP-*), apart from the HTTP transport:
the fixture loader builds it (and the fixture cache unpickles it) without importing http.client.

A fixture step's `"http"` member (docs/fixtures.md "HTTP faults") is one fault name, or an
object `{"faults": [NAME, ...], "nonce": LABEL}`: several faults committed on one request (two
faults at once, to pin the order an endpoint checks them in, D-HTTP-ORDER), and a chosen nonce
that several requests of the case share. `parse_fault` reads it with one clear error per
mistake; the transport (`http.py`) commits it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

#: How the request is framed on the wire (at most one): written by hand, not by http.client.
FRAMING_FAULTS = {
    "oversized": "a Content-Length one byte over 16 MiB, with only this payload after it",
    "oversized_wrapping": "a Content-Length of 2^32 plus this payload's length, only the payload",
    "no_length": "no Content-Length: the body is sent chunked (Transfer-Encoding: chunked)",
}
#: What the authentication headers say (D-HTTP-AUTH), grouped: at most one of each group.
SIGNATURE_FAULTS = {
    "unsigned": "no authentication headers",
    "bad_signature": "signed with another secret",
    "replay": "the exact headers and body this payload was last sent with, again",
    "signature_unknown_scheme": "the right HMAC under another scheme label (v2= instead of v1=)",
}
TIMESTAMP_FAULTS = {
    "stale": "a timestamp 600 s in the past, correctly signed",
    "future": "a timestamp 600 s in the future, correctly signed",
    "future_near": "a timestamp 330 s in the future (just past the window), correctly signed",
    "timestamp_malformed": "a timestamp with a fraction (1733450000.0), correctly signed over it",
}
NONCE_FAULTS = {
    "nonce_malformed": "a nonce of 32 uppercase hex digits, correctly signed over it",
}
BODY_FAULTS = {
    "altered": "the body changed after signing: a trailing space (the same JSON document)",
    "altered_leading": "the body changed after signing: a leading newline",
}
OTHER_FAULTS = {
    "wrong_content_type": "signed, sent as text/plain",
    "new_connection": "a freshly signed request over a new connection",
}
GROUPS: tuple[tuple[str, dict[str, str]], ...] = (
    ("framing", FRAMING_FAULTS),
    ("signature", SIGNATURE_FAULTS),
    ("timestamp", TIMESTAMP_FAULTS),
    ("nonce", NONCE_FAULTS),
    ("body", BODY_FAULTS),
    ("content type", {"wrong_content_type": OTHER_FAULTS["wrong_content_type"]}),
    ("connection", {"new_connection": OTHER_FAULTS["new_connection"]}),
)
#: Every fault a fixture step may name, in documentation order.
FAULTS: tuple[str, ...] = tuple(name for _, group in GROUPS for name in group)
#: Faults that leave no signature to vary: nothing else about the authentication may be asked.
_ALONE = ("unsigned", "replay")
#: The faults of the model server (lifecycle `http_502`, ...), committed in front of the
#: endpoint (transport/http.py INJECTED); a payload carries one as its only fault.
INJECTED_FAULTS = ("http_502", "http_503", "http_timeout", "http_reset")
_LABEL = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class HttpFault:
    """What the HTTP transport does wrong, on purpose, when it sends one request.

    `nonce`: the nonce to sign with (32 lowercase hex), drawn when the case's steps are built
    and shared by every step of the case that names the same label; None draws a fresh one.
    """

    names: frozenset[str] = frozenset()
    nonce: str | None = None

    def has(self, name: str) -> bool:
        return name in self.names

    @property
    def framing(self) -> str | None:
        """The hand-written framing (`oversized`, ...), or None for an ordinary request."""
        return next((name for name in FRAMING_FAULTS if name in self.names), None)

    @property
    def injected(self) -> str | None:
        """The model server's fault (`http_502`, ...) this request carries, or None."""
        return next((name for name in INJECTED_FAULTS if name in self.names), None)

    def describe(self) -> str:
        """`stale + nonce` style text for a wire log or an error."""
        parts = sorted(self.names) + (["chosen nonce"] if self.nonce else [])
        return " + ".join(parts)


def parse_fault(raw: object, nonces: dict[str, str] | None = None) -> HttpFault:
    """The fault a step's `http` member asks for; ValueError says what is wrong, in one line.

    `nonces` maps the labels already drawn for this case to their nonces (a new label gets a
    fresh one, added to it), so two steps naming one label sign with one nonce.
    """
    if isinstance(raw, str):
        return HttpFault(frozenset(_names([raw])))
    if not isinstance(raw, dict):
        raise ValueError(f"expected a fault name or an object {{faults, nonce}}, got {raw!r}")
    unknown = sorted(set(raw) - {"faults", "nonce"})
    if unknown:
        raise ValueError(f"unknown member {unknown[0]!r}: an HTTP fault has faults and nonce")
    names = raw.get("faults", [])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"faults: expected a list of fault names, got {names!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"faults: {names!r} names a fault twice")
    chosen = _names(names)
    label = raw.get("nonce")
    if label is None and not chosen:
        raise ValueError("an HTTP fault object names at least one fault or a nonce")
    nonce = None
    if label is not None:
        if not isinstance(label, str) or not _LABEL.match(label):
            raise ValueError(
                f"nonce: expected a label (a lowercase letter, then up to 31 of a-z, 0-9, _ "
                f"and -), got {label!r}; the transport draws the nonce itself"
            )
        clash = [name for name in chosen if name in (*_ALONE, "nonce_malformed")]
        if clash:
            raise ValueError(f"nonce: {clash[0]} leaves no nonce to choose")
        book = {} if nonces is None else nonces
        nonce = book.setdefault(label, secrets.token_hex(16))
    return HttpFault(frozenset(chosen), nonce)


def _names(names: list[str]) -> list[str]:
    """The names, checked: known, and at most one of each group; unsigned and replay alone."""
    for name in names:
        if name not in FAULTS:
            raise ValueError(f"unknown HTTP fault {name!r}; expected one of: {', '.join(FAULTS)}")
    for group, members in GROUPS:
        picked = [name for name in names if name in members]
        if len(picked) > 1:
            raise ValueError(f"{picked[0]} and {picked[1]} are both {group} faults: pick one")
    for alone in _ALONE:
        if alone in names:
            others = [
                name
                for name in names
                if name != alone and name not in FRAMING_FAULTS and name in _AUTH_FAULTS
            ]
            if others:
                raise ValueError(f"{alone} and {others[0]} cannot both apply to the signature")
    return names


_AUTH_FAULTS = {**SIGNATURE_FAULTS, **TIMESTAMP_FAULTS, **NONCE_FAULTS, **BODY_FAULTS}


class HttpPayload(bytes):
    """A payload with the fault the transport commits when it sends it (framed: plain bytes)."""

    fault: HttpFault

    def __new__(cls, payload: bytes, fault: HttpFault | str) -> HttpPayload:
        self = super().__new__(cls, payload)
        self.fault = HttpFault(frozenset([fault])) if isinstance(fault, str) else fault
        return self

    def __reduce__(self) -> tuple[type, tuple[bytes, HttpFault]]:
        """Pickled with its fault (the fixture cache stores loaded steps)."""
        return (HttpPayload, (bytes(self), self.fault))

    def again(self, payload: bytes) -> HttpPayload:
        """Another payload (a derived variant's rewrite) that keeps this one's fault."""
        return HttpPayload(payload, self.fault)
