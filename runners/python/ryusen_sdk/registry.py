"""The registry (§8.1-§8.3): functions by exact ID, exact-name triggers, the manifest.

Declarations are kept in author order and validated only when the manifest is built, so the
first failing §8.2 code is reported in the code order the protocol fixes, not in author order.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import rfc8785

from .durations import DurationLike, to_wire_millis
from .errors import InvalidRegistryError, RyusenError
from .hashing import hash_bytes

MANIFEST_FORMAT = "ryusen.manifest-contents/1"

Handler = Callable[..., Any]
F = TypeVar("F", bound=Handler)


@dataclass(frozen=True)
class FunctionDeclaration:
    """One author declaration of a function: its ID, body and optional whole-run timeout."""

    id: str
    handler: Handler
    timeout: DurationLike | None = None


@dataclass(frozen=True)
class TriggerDeclaration:
    """An exact-name event trigger selecting one function."""

    id: str
    event: str
    function: str


@dataclass(frozen=True)
class Manifest:
    """The complete manifest: canonical declarations, contents bytes and their hash (§8.3)."""

    functions: list[dict[str, str]]
    triggers: list[dict[str, str]]
    contents: bytes
    hash: str

    @property
    def function_ids(self) -> list[str]:
        """The sorted function IDs (the registration's logical function capabilities)."""
        return [declaration["id"] for declaration in self.functions]

    @property
    def contents_base64(self) -> str:
        """The contents bytes as they travel in `publish_manifest`."""
        return base64.b64encode(self.contents).decode("ascii")


class Registry:
    """Complete desired state of one application's functions and triggers."""

    def __init__(self) -> None:
        self._functions: list[FunctionDeclaration] = []
        self._triggers: list[TriggerDeclaration] = []

    def function(self, id: str, timeout: DurationLike | None = None) -> Callable[[F], F]:
        """Decorator declaring `handler(ctx, input)` as the function `id`."""

        def register(handler: F) -> F:
            self.add_function(id, handler, timeout)
            return handler

        return register

    def add_function(self, id: str, handler: Handler, timeout: DurationLike | None = None) -> None:
        """Declare a function without decorator syntax."""
        self._functions.append(FunctionDeclaration(id, handler, timeout))
        try:
            handler.ryusen_function_id = id  # type: ignore[attr-defined]
        except AttributeError:
            pass

    def trigger(self, id: str, event: str, function: str | Handler) -> None:
        """Declare that events named exactly `event` start `function` (an ID or a handler)."""
        if isinstance(function, str):
            function_id = function
        else:
            function_id = getattr(function, "ryusen_function_id", None)
            if function_id is None:
                raise TypeError("trigger() takes a function ID or a handler declared on a registry")
        self._triggers.append(TriggerDeclaration(id, event, function_id))

    def handler(self, function_id: str) -> Handler | None:
        """The body of a declared function, or None when the registry does not declare it."""
        for declaration in self._functions:
            if declaration.id == function_id:
                return declaration.handler
        return None

    def validate(self) -> None:
        """Raise `sdk.invalid_registry` with the first §8.2 code that fails."""
        self.manifest()

    def manifest(self) -> Manifest:
        """Validate (§8.2) and build the canonical manifest (§8.1, §8.3)."""
        functions = self._functions
        triggers = self._triggers
        if any(f.id == "" for f in functions):
            raise InvalidRegistryError("empty_function_id", "a function ID is empty")
        seen: set[str] = set()
        for f in functions:
            if f.id in seen:
                raise InvalidRegistryError("duplicate_function_id", f"{f.id!r} declared twice")
            seen.add(f.id)
        timeouts: dict[str, int] = {}
        for f in functions:
            if f.timeout is None:
                continue
            try:
                millis = to_wire_millis(f.timeout)
            except RyusenError as exc:
                raise InvalidRegistryError("invalid_timeout", exc.message) from None
            timeouts[f.id] = millis
        if any(t.id == "" for t in triggers):
            raise InvalidRegistryError("empty_trigger_id", "a trigger ID is empty")
        if any(t.event == "" for t in triggers):
            raise InvalidRegistryError("empty_event_name", "a trigger's event name is empty")
        for t in triggers:
            if t.function not in seen:
                raise InvalidRegistryError(
                    "undeclared_function", f"trigger {t.id!r} names undeclared {t.function!r}"
                )
        # Python compares str by code point, which is the order §8.1 requires.
        function_docs: list[dict[str, str]] = []
        for f in sorted(functions, key=lambda f: f.id):
            doc = {"id": f.id}
            if f.id in timeouts:
                doc["timeout_ms"] = str(timeouts[f.id])
            function_docs.append(doc)
        trigger_docs = [
            {"id": t.id, "event": t.event, "function": t.function}
            for t in sorted(triggers, key=lambda t: (t.id, t.event, t.function))
        ]
        contents = rfc8785.dumps(
            {"format": MANIFEST_FORMAT, "functions": function_docs, "triggers": trigger_docs}
        )
        return Manifest(function_docs, trigger_docs, contents, hash_bytes(contents))
