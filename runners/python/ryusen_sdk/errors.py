"""The §5 structured error record, mapped onto Python exceptions both ways.

A workflow sees every failure through one exception type, `RyusenError`, carrying exactly the
record the wire carries, so a replayed failure reaches the workflow unchanged (§5.1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

CATEGORY_PATTERN = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*")


class RyusenError(Exception):
    """An application or SDK failure with a stable category (the §5.1 error record)."""

    def __init__(
        self,
        category: str,
        message: str = "",
        retryable: bool = False,
        details: Mapping[str, str] | None = None,
        cause: RyusenError | None = None,
    ) -> None:
        _check_record_fields(category, message, retryable, details, cause)
        super().__init__(message)
        self.category = category
        self.message = message
        self.retryable = retryable
        self.details: dict[str, str] = dict(details or {})
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    def to_record(self) -> dict[str, Any]:
        """The wire record (§5.1): `details` always spelled, `cause` only when present."""
        record: dict[str, Any] = {
            "category": self.category,
            "message": _clean_text(self.message),
            "retryable": self.retryable,
            "details": {_clean_text(k): _clean_text(v) for k, v in self.details.items()},
        }
        if self.cause is not None:
            record["cause"] = self.cause.to_record()
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RyusenError:
        """Rebuild the exception from a (validated) record, unchanged (§5.1)."""
        cause = record.get("cause")
        return RyusenError(
            record["category"],
            record["message"],
            record["retryable"],
            record["details"],
            cls.from_record(cause) if cause is not None else None,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.category!r}, {self.message!r})"


def _check_record_fields(
    category: object, message: object, retryable: object, details: object, cause: object
) -> None:
    """Refuse a record the wire cannot carry at construction, so it is never rewritten later.

    The refusal is itself a record, `sdk.conversion` (§5.1): raised in a callback it is that
    callback's failure, raised in the function body an uncaught failure.
    """
    problem = None
    if not isinstance(category, str) or not CATEGORY_PATTERN.fullmatch(category):
        problem = f"{category!r} is not a stable category ([a-z][a-z0-9_]*(.[a-z0-9_]+)*)"
    elif not isinstance(message, str):
        problem = "an error message is a string"
    elif not isinstance(retryable, bool):
        problem = "retryable is a bool"
    elif details is not None and (
        not isinstance(details, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in details.items())
    ):
        problem = "error details map strings to strings"
    elif cause is not None and not isinstance(cause, RyusenError):
        problem = "an error cause is a RyusenError"
    if problem is not None:
        raise ConversionError(f"not an error record: {problem}")


def _clean_text(text: str) -> str:
    """Messages are free text: a lone surrogate must not make the answer unencodable."""
    return text.encode("utf-8", "replace").decode("utf-8")


class SdkError(RyusenError):
    """An `sdk.*` refusal raised by the SDK itself: never retryable (§5.2)."""

    def __init__(self, category: str, message: str, details: Mapping[str, str] | None = None):
        super().__init__(category, message, False, details or {})


class ConversionError(SdkError):
    """`sdk.conversion`: a value the tagged model cannot carry (§3.5) or over a limit (§4.3)."""

    def __init__(self, message: str) -> None:
        super().__init__("sdk.conversion", message)


class InvalidDurationError(SdkError):
    """`sdk.invalid_duration`: a malformed or out-of-range duration (§6)."""

    def __init__(self, message: str) -> None:
        super().__init__("sdk.invalid_duration", message)


class InvalidDeclarationError(SdkError):
    """`sdk.invalid_declaration`: a declaration the protocol forbids (§10.1)."""

    def __init__(self, message: str) -> None:
        super().__init__("sdk.invalid_declaration", message)


class JsonConvenienceError(SdkError):
    """`sdk.json`: the JSON convenience refused its input (§3.6)."""

    def __init__(self, message: str) -> None:
        super().__init__("sdk.json", message)


class InvalidRegistryError(SdkError):
    """`sdk.invalid_registry`: the registry breaks a §8.2 rule; details carry the code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__("sdk.invalid_registry", message, {"code": code})
        self.code = code


class ProtocolError(RyusenError):
    """A `protocol.*` failure: details carry only the JSON pointer of the offence (§5.2)."""

    def __init__(self, category: str, pointer: str, message: str = "") -> None:
        super().__init__(category, message or category, False, {"pointer": pointer})
        self.pointer = pointer


def error_from_exception(exc: BaseException) -> RyusenError:
    """Map any caught failure to a record: foreign exceptions become `app.unhandled` (§11.5)."""
    if isinstance(exc, RyusenError):
        return exc
    # "the failure's message" (§11.5): an empty one stays empty, never the class name
    return RyusenError("app.unhandled", str(exc), True, {})


def record_of(exc: BaseException) -> dict[str, Any]:
    """The §5.1 record of any caught failure."""
    return error_from_exception(exc).to_record()
