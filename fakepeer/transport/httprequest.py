"""One request's bytes and headers, with the fault a fixture asks for (docs/fixtures.md
"HTTP faults"), apart from the connection that carries it (`http.py`).

Every request is signed as D-HTTP-AUTH says unless its fault says otherwise; a fault changes
only what it names (a stale request is signed correctly, over a stale timestamp), so an
endpoint that refuses it can have refused it for that one reason only.
"""

from __future__ import annotations

import secrets
import time

from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.transport import httpauth
from fakepeer.transport.payload import HttpFault

#: How far ahead `future_near` signs: just past the window (D-HTTP-AUTH), with a margin for
#: the second the timestamp is truncated to and the time the request takes.
FUTURE_NEAR_SECONDS = 330
#: How many signed requests are kept for a later `replay` fault.
KEPT_SIGNATURES = 16
#: The faults after which the request is still exactly as D-HTTP-AUTH signs it: kept for a
#: later `replay`.
_AUTHENTIC = frozenset({"new_connection"})


class SignedRequests:
    """The signatures of recent authentic requests, by body, for a later `replay`."""

    def __init__(self) -> None:
        self._kept: dict[bytes, dict[str, str]] = {}

    def keep(self, body: bytes, signed: dict[str, str]) -> None:
        if len(self._kept) >= KEPT_SIGNATURES:
            self._kept.pop(next(iter(self._kept)))
        self._kept[body] = signed

    def last(self, body: bytes) -> dict[str, str] | None:
        return self._kept.get(body)


def request_parts(
    body: bytes, fault: HttpFault | None, secret: str | None, kept: SignedRequests
) -> tuple[bytes, dict[str, str]]:
    """(the body to send, its headers) for one request, the fault committed."""
    if fault is None:  # the common request, on the hot path: signed as D-HTTP-AUTH says
        signed = httpauth.headers(secret, int(time.time()), body)
        if signed:
            kept.keep(body, signed)
        return body, {"Content-Type": "application/json", **signed}
    fault = fault or HttpFault()
    content_type = "text/plain" if fault.has("wrong_content_type") else "application/json"
    headers = {"Content-Type": content_type}
    signed = _signature_headers(body, fault, secret, kept)
    if fault.has("altered"):
        body += b" "  # still the same JSON document: only the signature can tell
    elif fault.has("altered_leading"):
        body = b"\n" + body  # the same document again, changed at its other end
    return body, {**headers, **signed}


def _signature_headers(
    body: bytes, fault: HttpFault, secret: str | None, kept: SignedRequests
) -> dict[str, str]:
    if secret is None or fault.has("unsigned"):
        return {}
    if fault.has("replay"):
        again = kept.last(body)
        if again is not None:
            return dict(again)
    now = int(time.time())
    if fault.has("stale"):
        now -= 2 * httpauth.REPLAY_WINDOW_SECONDS
    elif fault.has("future"):
        now += 2 * httpauth.REPLAY_WINDOW_SECONDS
    elif fault.has("future_near"):
        now += FUTURE_NEAR_SECONDS
    stamp = f"{now}.0" if fault.has("timestamp_malformed") else str(now)
    nonce = fault.nonce
    if fault.has("nonce_malformed"):
        nonce = secrets.token_hex(16).upper()
    key = httpauth.new_secret() if fault.has("bad_signature") else secret
    signed = httpauth.headers(key, stamp, body, nonce)
    if fault.has("signature_unknown_scheme"):
        _, _, mac = signed[httpauth.SIGNATURE_HEADER].partition("=")
        signed[httpauth.SIGNATURE_HEADER] = f"v2={mac}"
    if fault.names <= _AUTHENTIC:
        kept.keep(body, signed)
    return signed


def hand_written_head(
    path: str, host: str, port: int, body: bytes, headers: dict[str, str], framing: str
) -> bytes:
    """The request line and headers of a request whose framing http.client would not write:
    a length past the limit announced over a short body, or no length at all (chunked)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if framing == "oversized":
        lines.append(f"Content-Length: {MAX_FRAME_BYTES + 1}")
    elif framing == "oversized_wrapping":
        # 4 GiB more than is sent: a length kept in 32 bits reads exactly the payload
        lines.append(f"Content-Length: {2**32 + len(body)}")
    else:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def hand_written_body(body: bytes, framing: str) -> bytes:
    """What follows the head: the payload, or the payload as one chunk and the last chunk."""
    if framing == "no_length":
        return f"{len(body):x}\r\n".encode("ascii") + body + b"\r\n0\r\n\r\n"
    return body
