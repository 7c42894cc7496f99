"""Canonical JSON (RFC 8785) and SHA-256 hashes, so one payload hashes the same in every language.

See docs/protocol.md section 4. The canonicalizer is the maintained `rfc8785` library; we never
hand-write JCS.
"""

from __future__ import annotations

import hashlib

import rfc8785

HASH_PREFIX = "sha256:"


class CanonicalizationError(ValueError):
    """A document that has no canonical JSON form (a non-finite float, a non-string key...)."""


def canonical_bytes(document: object) -> bytes:
    """Return the RFC 8785 canonical encoding of a JSON document."""
    try:
        return rfc8785.dumps(document)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise CanonicalizationError(str(exc)) from exc


def hash_bytes(data: bytes) -> str:
    """Return `sha256:<64 lowercase hex>` over raw bytes."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def hash_document(document: object) -> str:
    """Return the hash of a JSON document's canonical encoding."""
    return hash_bytes(canonical_bytes(document))
