"""Request authentication over HTTP (D-HTTP-AUTH): HMAC-SHA256 over timestamp, nonce, body.

The bench signs every request it sends; an endpoint that offers `request_authentication`
refuses an unsigned, wrongly signed, altered, stale or replayed request before it runs
anything. The scheme is the project's decision (RFD 6 is not available), kept to what one
line of any standard library can check.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: The request header carrying the signing time: decimal Unix seconds.
TIMESTAMP_HEADER = "Ryusen-Timestamp"
#: The request header carrying a fresh random value per request (32 lowercase hex): a request
#: carrying a nonce already accepted within the window is a replay.
NONCE_HEADER = "Ryusen-Nonce"
#: The request header carrying `v1=<64 lowercase hex>`.
SIGNATURE_HEADER = "Ryusen-Signature"
#: The variable a started host reads its secret from (hex text, used as its ASCII bytes).
SECRET_VARIABLE = "RYUSEN_CONFORM_HTTP_SECRET"
#: A timestamp further than this from the endpoint's clock, either way, is stale.
REPLAY_WINDOW_SECONDS = 300
#: The transport capability an endpoint announces when it authenticates requests.
CAPABILITY = "request_authentication"


def new_secret() -> str:
    """A fresh secret for one started host: 32 random bytes as hex."""
    return secrets.token_hex(32)


def signature(secret: str, timestamp: str, nonce: str, body: bytes) -> str:
    """`v1=` + hex HMAC-SHA256(secret, timestamp + "." + nonce + "." + body)."""
    signed = f"{timestamp}.{nonce}.".encode("ascii") + body
    return "v1=" + hmac.new(secret.encode("ascii"), signed, hashlib.sha256).hexdigest()


def headers(
    secret: str | None, timestamp: int | str, body: bytes, nonce: str | None = None
) -> dict[str, str]:
    """The authentication headers of one request (none without a secret); `nonce` None draws
    a fresh one (32 lowercase hex)."""
    if secret is None:
        return {}
    stamp, nonce = str(timestamp), nonce or secrets.token_hex(16)
    return {
        TIMESTAMP_HEADER: stamp,
        NONCE_HEADER: nonce,
        SIGNATURE_HEADER: signature(secret, stamp, nonce, body),
    }
