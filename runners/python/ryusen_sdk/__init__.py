"""Ryusen Python SDK: the reference implementation of the Ryusen execution protocol 1.1.

Declare functions on a `Registry`, write them against the `Workflow` context, and let a worker
answer invocations. See runners/python/README.md.
"""

from .durations import to_wire_millis
from .errors import (
    ConversionError,
    InvalidDeclarationError,
    InvalidDurationError,
    InvalidRegistryError,
    JsonConvenienceError,
    ProtocolError,
    RyusenError,
)
from .invocation import InvokeRequest, execute
from .json_convenience import from_bytes as json_from_bytes
from .json_convenience import to_bytes as json_to_bytes
from .payloads import JsonDocument
from .registry import Manifest, Registry
from .values import U64, BlobRef, Duration, Instant, from_tagged, to_tagged
from .workflow import Retry, StepContext, Workflow

__all__ = [
    "U64",
    "BlobRef",
    "ConversionError",
    "Duration",
    "Instant",
    "InvalidDeclarationError",
    "InvalidDurationError",
    "InvalidRegistryError",
    "InvokeRequest",
    "JsonConvenienceError",
    "JsonDocument",
    "Manifest",
    "ProtocolError",
    "Registry",
    "Retry",
    "RyusenError",
    "StepContext",
    "Workflow",
    "execute",
    "from_tagged",
    "json_from_bytes",
    "json_to_bytes",
    "to_tagged",
    "to_wire_millis",
]
