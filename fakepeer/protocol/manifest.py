"""Manifests, generations and the server's publication model (docs/protocol.md §7.1, §8).

The bench plays the server, so it needs the exact identities an SDK must reproduce (contents
bytes, manifest hash, unversioned group) and a faithful model of publication: authorization
first, §8.2 validation, idempotent repeats, parent conflicts and the internally retried
workspace-head compare-and-set.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from fakepeer.protocol.canonical import canonical_bytes, hash_bytes, hash_document
from fakepeer.protocol.durations import DurationError, parse_duration_ms
from fakepeer.protocol.limits import U64_MAX
from fakepeer.protocol.values import parse_int_text

CONTENTS_FORMAT: Final = "ryusen.manifest-contents/1"
UNVERSIONED_PREFIX: Final = "unversioned:"

# §8.2 codes, in the order they are checked.
EMPTY_FUNCTION_ID: Final = "empty_function_id"
DUPLICATE_FUNCTION_ID: Final = "duplicate_function_id"
INVALID_TIMEOUT: Final = "invalid_timeout"
EMPTY_TRIGGER_ID: Final = "empty_trigger_id"
EMPTY_EVENT_NAME: Final = "empty_event_name"
UNDECLARED_FUNCTION: Final = "undeclared_function"
TIMEOUT_ABOVE_MAXIMUM: Final = "timeout_above_maximum"
REGISTRY_CODES: Final = (
    EMPTY_FUNCTION_ID,
    DUPLICATE_FUNCTION_ID,
    INVALID_TIMEOUT,
    EMPTY_TRIGGER_ID,
    EMPTY_EVENT_NAME,
    UNDECLARED_FUNCTION,
    TIMEOUT_ABOVE_MAXIMUM,
)


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, order=True)
class FunctionDecl:
    """A canonical function declaration: exact ID and optional whole-run timeout (ms)."""

    id: str
    timeout_ms: int | None = None

    def to_json(self) -> dict[str, str]:
        """`{"id"}` or `{"id", "timeout_ms": <u64 string>}` (§8.1)."""
        if self.timeout_ms is None:
            return {"id": self.id}
        return {"id": self.id, "timeout_ms": str(self.timeout_ms)}


@dataclass(frozen=True, order=True)
class TriggerBinding:
    """An exact-name event trigger selecting one function; field order is the §8.1 sort key."""

    id: str
    event: str
    function: str

    def to_json(self) -> dict[str, str]:
        """`{"id", "event", "function"}` (§8.1)."""
        return {"id": self.id, "event": self.event, "function": self.function}


class RegistryError(ValueError):
    """A registry breaking §8.2; `code` is the first failing rule."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


class _Invalid:
    """Marks a timeout that is malformed, out of range or below 1 ms."""


_INVALID = _Invalid()
Timeout = int | None | _Invalid


def _function_parts(decl: FunctionDecl | Mapping[str, Any]) -> tuple[str, Timeout]:
    """(id, timeout) of a model, wire (`timeout_ms`) or registry-spec (`timeout`) declaration."""
    if isinstance(decl, FunctionDecl):
        ident, raw = decl.id, decl.timeout_ms
        timeout: Timeout = raw
        if raw is not None and (type(raw) is not int or not 0 <= raw <= U64_MAX):
            timeout = _INVALID
        return ident, timeout
    ident = decl.get("id")
    if not isinstance(ident, str):
        raise TypeError(f"function declaration id must be a string: {decl!r}")
    if "timeout_ms" in decl:
        parsed = parse_int_text(decl["timeout_ms"], 0, U64_MAX)
        return ident, _INVALID if parsed is None else parsed
    if "timeout" in decl and decl["timeout"] is not None:
        try:
            count = parse_duration_ms(decl["timeout"])
        except DurationError:
            return ident, _INVALID
        return ident, count  # zero and negative are kept as 0 (D-RUN-TIMEOUT-ZERO)
    return ident, None


def _trigger_parts(binding: TriggerBinding | Mapping[str, Any]) -> TriggerBinding:
    if isinstance(binding, TriggerBinding):
        return binding
    parts = [binding.get(name) for name in ("id", "event", "function")]
    if not all(isinstance(part, str) for part in parts):
        raise TypeError(f"trigger binding members must be strings: {binding!r}")
    return TriggerBinding(*parts)  # type: ignore[arg-type]


def validate_registry(
    functions: Sequence[FunctionDecl | Mapping[str, Any]],
    triggers: Sequence[TriggerBinding | Mapping[str, Any]],
    policy_max_timeout_ms: int | None = None,
) -> str | None:
    """The first §8.2 code the registry breaks, in §8.2 order, or None.

    Declarations may be model objects, wire JSON (`timeout_ms` strings) or §12.3 registry-spec
    JSON (author `timeout` text, converted by §6). `timeout_above_maximum` is checked only when
    a policy maximum is given (server side).
    """
    parts = [_function_parts(decl) for decl in functions]
    bindings = [_trigger_parts(binding) for binding in triggers]
    ids = [ident for ident, _ in parts]
    if any(ident == "" for ident in ids):
        return EMPTY_FUNCTION_ID
    if len(set(ids)) != len(ids):
        return DUPLICATE_FUNCTION_ID
    if any(isinstance(timeout, _Invalid) for _, timeout in parts):
        return INVALID_TIMEOUT
    if any(binding.id == "" for binding in bindings):
        return EMPTY_TRIGGER_ID
    if any(binding.event == "" for binding in bindings):
        return EMPTY_EVENT_NAME
    declared = set(ids)
    if any(binding.function not in declared for binding in bindings):
        return UNDECLARED_FUNCTION
    if policy_max_timeout_ms is not None and any(
        isinstance(timeout, int) and timeout > policy_max_timeout_ms for _, timeout in parts
    ):
        return TIMEOUT_ABOVE_MAXIMUM
    return None


def build_registry(
    functions: Sequence[FunctionDecl | Mapping[str, Any]],
    triggers: Sequence[TriggerBinding | Mapping[str, Any]],
    policy_max_timeout_ms: int | None = None,
) -> tuple[tuple[FunctionDecl, ...], tuple[TriggerBinding, ...]]:
    """Validate (§8.2) and canonicalize (§8.1) declarations; raise RegistryError on a violation."""
    code = validate_registry(functions, triggers, policy_max_timeout_ms)
    if code is not None:
        raise RegistryError(code)
    decls = []
    for decl in functions:
        ident, timeout = _function_parts(decl)
        assert not isinstance(timeout, _Invalid)
        decls.append(FunctionDecl(ident, timeout))
    return canonical_declarations(decls, [_trigger_parts(binding) for binding in triggers])


def canonical_declarations(
    functions: Sequence[FunctionDecl], triggers: Sequence[TriggerBinding]
) -> tuple[tuple[FunctionDecl, ...], tuple[TriggerBinding, ...]]:
    """Sort functions by id and triggers by (id, event, function), by Unicode code point.

    Python compares `str` by code point, which is the §8.1 order (not UTF-16 code units).
    """
    return (
        tuple(sorted(functions, key=lambda decl: decl.id)),
        tuple(sorted(triggers, key=lambda b: (b.id, b.event, b.function))),
    )


def _declarations_json(
    functions: Sequence[FunctionDecl], triggers: Sequence[TriggerBinding]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    funcs, trigs = canonical_declarations(functions, triggers)
    return [decl.to_json() for decl in funcs], [binding.to_json() for binding in trigs]


def contents_bytes(functions: Sequence[FunctionDecl], triggers: Sequence[TriggerBinding]) -> bytes:
    """The manifest contents bytes (§8.3): canonical JSON of the sorted declarations."""
    funcs, trigs = _declarations_json(functions, triggers)
    return canonical_bytes({"format": CONTENTS_FORMAT, "functions": funcs, "triggers": trigs})


def manifest_hash(contents: bytes) -> str:
    """The manifest hash (§8.3): `sha256:` of the contents bytes."""
    return hash_bytes(contents)


def unversioned_group(contract: dict[str, Any], functions: list[str], manifest_hash: str) -> str:
    """The §7.1 unversioned group: `unversioned:` + hash of contract, functions, manifest hash."""
    document = {"contract": contract, "functions": functions, "manifest_hash": manifest_hash}
    return UNVERSIONED_PREFIX + hash_document(document)


def _scope_json(scope: Mapping[str, Any]) -> dict[str, str]:
    return {"workspace_id": scope["workspace_id"], "application_id": scope["application_id"]}


def application_generation_id(
    scope: Mapping[str, Any],
    expected_parent: str | None,
    contents: bytes,
    functions: Sequence[FunctionDecl],
    triggers: Sequence[TriggerBinding],
) -> str:
    """§8.5 application generation ID: hash of scope, parent, base64 contents, declarations."""
    funcs, trigs = _declarations_json(functions, triggers)
    return hash_document(
        {
            "scope": _scope_json(scope),
            "expected_parent": expected_parent,
            "contents": base64.b64encode(contents).decode("ascii"),
            "functions": funcs,
            "triggers": trigs,
        }
    )


def workspace_content_hash(applications: Mapping[str, str]) -> str:
    """§8.5 `content_hash`: hash of the application-ID-to-generation map."""
    return hash_document(dict(applications))


def workspace_generation_id(
    workspace_id: str, expected_parent: str | None, content_hash: str
) -> str:
    """§8.5 workspace `generation_id`: hash of workspace ID, parent and content hash."""
    return hash_document(
        {
            "workspace_id": workspace_id,
            "expected_parent": expected_parent,
            "content_hash": content_hash,
        }
    )


# --------------------------------------------------------------------------- server model


@dataclass(frozen=True)
class ApplicationGeneration:
    """An immutable, content-hashed application generation."""

    generation_id: str
    scope: tuple[str, str]
    expected_parent: str | None
    contents: bytes
    functions: tuple[FunctionDecl, ...]
    triggers: tuple[TriggerBinding, ...]

    @property
    def manifest_hash(self) -> str:
        """Hash of the contents bytes the publisher sent."""
        return manifest_hash(self.contents)


@dataclass(frozen=True)
class WorkspaceGeneration:
    """An immutable workspace routing generation (§8.5)."""

    workspace_id: str
    generation_id: str
    expected_parent: str | None
    content_hash: str
    commit_order: int
    applications: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The logical record, with the members §8.5 names."""
        return {
            "workspace_id": self.workspace_id,
            "generation_id": self.generation_id,
            "expected_parent": self.expected_parent,
            "content_hash": self.content_hash,
            "commit_order": self.commit_order,
            "applications": dict(self.applications),
        }


@dataclass(frozen=True)
class Activation:
    """`manifest_activated`."""

    application_generation: str
    workspace_generation: str
    commit_order: int

    kind = "manifest_activated"

    def to_body(self) -> dict[str, Any]:
        """The message body."""
        return {
            "application_generation": self.application_generation,
            "workspace_generation": self.workspace_generation,
            "commit_order": self.commit_order,
        }


@dataclass(frozen=True)
class Conflict:
    """`manifest_conflict`: the expected parent is not the active generation."""

    active_generation: str | None
    message: str

    kind = "manifest_conflict"

    def to_body(self) -> dict[str, Any]:
        """The message body (`active_generation` is null when the application has none)."""
        return {"active_generation": self.active_generation, "message": self.message}


@dataclass(frozen=True)
class Rejection:
    """`manifest_rejected` with a §8.2 code."""

    code: str
    message: str

    kind = "manifest_rejected"

    def to_body(self) -> dict[str, Any]:
        """The message body."""
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Unauthorized:
    """The request's scope is not the credential's; nothing was looked up (no wire kind in 1.0)."""

    message: str


PublishResult = Activation | Conflict | Rejection | Unauthorized


class ManifestStore:
    """In-memory model of the server's manifest heads and generations (§8.5).

    `before_workspace_cas`, when set, is called with the store after the workspace head was read
    and before it is compare-and-set, so a test can land a concurrent publication there.
    """

    def __init__(self, policy_max_timeout_ms: int | None = None) -> None:
        self.policy_max_timeout_ms = policy_max_timeout_ms
        self.before_workspace_cas: Callable[[ManifestStore], None] | None = None
        self.cas_retries = 0
        self._commit_order = 0
        self._app_heads: dict[tuple[str, str], str] = {}
        self._app_generations: dict[tuple[str, str], dict[str, ApplicationGeneration]] = {}
        self._activations: dict[tuple[str, str, str], Activation] = {}
        self._workspace_heads: dict[str, WorkspaceGeneration] = {}
        self._workspace_generations: dict[str, list[WorkspaceGeneration]] = {}

    # ------------------------------------------------------------------ reads

    def active_generation(self, scope: Mapping[str, Any]) -> str | None:
        """The application's active generation ID, or None before its first publication."""
        return self._app_heads.get(_scope_key(scope))

    def application_generations(self, scope: Mapping[str, Any]) -> list[ApplicationGeneration]:
        """Every generation ever activated for the application, oldest first."""
        return list(self._app_generations.get(_scope_key(scope), {}).values())

    def workspace_head(self, workspace_id: str) -> WorkspaceGeneration | None:
        """The current workspace routing generation."""
        return self._workspace_heads.get(workspace_id)

    def workspace_generations(self, workspace_id: str) -> list[WorkspaceGeneration]:
        """Every routing generation of the workspace, in commit order; old ones stay readable."""
        return list(self._workspace_generations.get(workspace_id, []))

    # ------------------------------------------------------------------ publication

    def publish(
        self, credential_scope: Mapping[str, Any], publication: Mapping[str, Any]
    ) -> PublishResult:
        """Apply one `publish_manifest` body under a credential-derived scope (§8.5).

        The body is expected to be schema-valid; a structurally broken one raises ValueError.
        """
        scope = publication.get("scope")
        if (
            not isinstance(scope, Mapping)
            or not _is_scope(credential_scope)
            or _scope_key(scope) != _scope_key(credential_scope)
        ):
            return Unauthorized("the publication's scope is not the credential's scope")
        code = validate_registry(
            publication["functions"], publication["triggers"], self.policy_max_timeout_ms
        )
        if code is not None:
            return Rejection(code, f"registry violates {code}")
        functions, triggers = build_registry(publication["functions"], publication["triggers"])
        try:
            contents = base64.b64decode(publication["contents"], validate=True)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"contents is not base64: {exc}") from None
        expected_parent = publication["expected_parent"]
        key = _scope_key(scope)
        generation_id = application_generation_id(
            scope, expected_parent, contents, functions, triggers
        )
        generation = ApplicationGeneration(
            generation_id, key, expected_parent, contents, functions, triggers
        )
        while True:
            earlier = self._activations.get((*key, generation_id))
            if earlier is not None:
                return earlier
            active = self._app_heads.get(key)
            if expected_parent != active:
                return Conflict(
                    active, f"expected parent {expected_parent} is not the active generation"
                )
            head = self._workspace_heads.get(key[0])
            if self.before_workspace_cas is not None:
                self.before_workspace_cas(self)
            if self._app_heads.get(key) != active or (*key, generation_id) in self._activations:
                continue  # the same application moved: decide again (conflict or repeat)
            if self._workspace_heads.get(key[0]) is not head:
                self.cas_retries += 1
                continue  # another application moved the workspace head: rebuild over it
            return self._commit(generation, head)

    def _commit(
        self, generation: ApplicationGeneration, head: WorkspaceGeneration | None
    ) -> Activation:
        workspace_id, application_id = generation.scope
        applications = dict(head.applications) if head is not None else {}
        applications[application_id] = generation.generation_id
        content_hash = workspace_content_hash(applications)
        parent = head.generation_id if head is not None else None
        self._commit_order += 1
        routing = WorkspaceGeneration(
            workspace_id,
            workspace_generation_id(workspace_id, parent, content_hash),
            parent,
            content_hash,
            self._commit_order,
            dict(sorted(applications.items())),
        )
        activation = Activation(
            generation.generation_id, routing.generation_id, routing.commit_order
        )
        self._workspace_heads[workspace_id] = routing
        self._workspace_generations.setdefault(workspace_id, []).append(routing)
        self._app_heads[generation.scope] = generation.generation_id
        self._app_generations.setdefault(generation.scope, {})[generation.generation_id] = (
            generation
        )
        self._activations[(*generation.scope, generation.generation_id)] = activation
        return activation


def _is_scope(scope: object) -> bool:
    return isinstance(scope, Mapping) and all(
        isinstance(scope.get(name), str) and scope.get(name)
        for name in ("workspace_id", "application_id")
    )


def _scope_key(scope: Mapping[str, Any]) -> tuple[str, str]:
    return (scope.get("workspace_id"), scope.get("application_id"))  # type: ignore[return-value]
