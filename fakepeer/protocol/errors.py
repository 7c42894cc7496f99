"""Structured error records (docs/protocol.md §5): one record shape for every language.

The bench compares records from SDKs and builds records for `protocol_error`; both go through
`ErrorRecord.from_json` / `to_json` so a malformed record is caught in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from fakepeer.protocol.pointer import escape

#: §5.1 category grammar.
CATEGORY: Final = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*", re.ASCII)

# §5.2 reserved categories.
SDK_TIMEOUT: Final = "sdk.timeout"
SDK_INVALID_RESULT: Final = "sdk.invalid_result"
SDK_CONVERSION: Final = "sdk.conversion"
SDK_INVALID_DURATION: Final = "sdk.invalid_duration"
SDK_INVALID_DECLARATION: Final = "sdk.invalid_declaration"
SDK_JSON: Final = "sdk.json"
SDK_INVALID_REGISTRY: Final = "sdk.invalid_registry"
PROTOCOL_MALFORMED: Final = "protocol.malformed"
PROTOCOL_UNSUPPORTED_VERSION: Final = "protocol.unsupported_version"
PROTOCOL_UNKNOWN_VARIANT: Final = "protocol.unknown_variant"
PROTOCOL_UNKNOWN_CAPABILITY: Final = "protocol.unknown_capability"
PROTOCOL_INVALID_VALUE: Final = "protocol.invalid_value"
PROTOCOL_LIMIT_EXCEEDED: Final = "protocol.limit_exceeded"
PROTOCOL_UNKNOWN_FUNCTION: Final = "protocol.unknown_function"
PROTOCOL_UNAUTHENTICATED: Final = "protocol.unauthenticated"

#: Every category §5.2 lists, in its table order.
RESERVED_CATEGORIES: Final = (
    SDK_TIMEOUT,
    SDK_INVALID_RESULT,
    SDK_CONVERSION,
    SDK_INVALID_DURATION,
    SDK_INVALID_DECLARATION,
    SDK_JSON,
    SDK_INVALID_REGISTRY,
    PROTOCOL_MALFORMED,
    PROTOCOL_UNSUPPORTED_VERSION,
    PROTOCOL_UNKNOWN_VARIANT,
    PROTOCOL_UNKNOWN_CAPABILITY,
    PROTOCOL_INVALID_VALUE,
    PROTOCOL_LIMIT_EXCEEDED,
    PROTOCOL_UNKNOWN_FUNCTION,
    PROTOCOL_UNAUTHENTICATED,
)


def is_reserved(category: str) -> bool:
    """True for the `sdk.` and `protocol.` namespaces, reserved for the §5.2 meanings.

    An SDK never rewrites a record an application raises or re-raises, reserved or not.
    """
    return category.startswith(("sdk.", "protocol."))


class ErrorRecordError(ValueError):
    """A JSON document that is not an error record; `pointer` is relative to the record."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__(f"invalid error record at {pointer or '(root)'}: {reason}")
        self.pointer = pointer
        self.reason = reason


@dataclass(frozen=True)
class ErrorRecord:
    """§5.1: category, message, retryable, details (string to string), optional cause."""

    category: str
    message: str
    retryable: bool
    details: dict[str, str] = field(default_factory=dict)
    cause: ErrorRecord | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form: `details` always spelled, `cause` only when present."""
        doc: dict[str, Any] = {
            "category": self.category,
            "message": self.message,
            "retryable": self.retryable,
            "details": dict(self.details),
        }
        if self.cause is not None:
            doc["cause"] = self.cause.to_json()
        return doc

    @classmethod
    def from_json(cls, doc: object, pointer: str = "") -> ErrorRecord:
        """Parse and validate a wire record; unknown members are ignored (§2)."""
        if not isinstance(doc, dict):
            raise ErrorRecordError(pointer, "an error record must be a JSON object")
        category = doc.get("category")
        if not isinstance(category, str) or not CATEGORY.fullmatch(category):
            raise ErrorRecordError(f"{pointer}/category", f"bad category {category!r}")
        message = doc.get("message")
        if not isinstance(message, str):
            raise ErrorRecordError(f"{pointer}/message", "message must be a string")
        retryable = doc.get("retryable")
        if not isinstance(retryable, bool):
            raise ErrorRecordError(f"{pointer}/retryable", "retryable must be a boolean")
        details = doc.get("details")
        if not isinstance(details, dict):
            raise ErrorRecordError(f"{pointer}/details", "details must be an object")
        for key, value in details.items():
            if not isinstance(value, str):
                raise ErrorRecordError(
                    f"{pointer}/details/{escape(key)}", "details values are strings"
                )
        cause = None
        if "cause" in doc:
            cause = cls.from_json(doc["cause"], f"{pointer}/cause")
        return cls(category, message, retryable, dict(details), cause)

    @classmethod
    def protocol(cls, category: str, pointer: str, message: str) -> ErrorRecord:
        """The record of a `protocol_error` (§10.9): not retryable, details hold the pointer."""
        return cls(category, message, False, {"pointer": pointer})
