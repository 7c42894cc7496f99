"""§4.2 hashes: `sha256:` + hex over bytes, or over a JSON document's RFC 8785 encoding."""

from __future__ import annotations

import hashlib

import rfc8785


def hash_bytes(data: bytes) -> str:
    """`sha256:<64 lowercase hex>` of raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def hash_document(document: object) -> str:
    """The hash of a JSON document's canonical encoding (§4.1)."""
    return hash_bytes(rfc8785.dumps(document))  # type: ignore[arg-type]
