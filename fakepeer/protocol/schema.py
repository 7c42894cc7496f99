"""JSON Schemas of every message kind (docs/protocol.md §14) and a fast cached validator.

The schema files in `schemas/` are the published, machine-readable surface; `validate_message`
is on the bench's hot path (every SDK frame), so validators are built once per kind and the
deep value checks of §3 (canonical f64 text, depth, size) are delegated to `values.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakepeer import atomic
from fakepeer.protocol import fastpath
from fakepeer.protocol.fastpath import Check, Compiler, strict_regex
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.pointer import join
from fakepeer.protocol.strictjson import is_integer
from fakepeer.protocol.value_paths import value_positions
from fakepeer.protocol.values import ConversionError, validate_value

if TYPE_CHECKING:  # jsonschema is imported on the slow path only: a valid frame needs none
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

COMMON = "common"
_SCHEMA_DIR = "schemas"


@dataclass(frozen=True)
class SchemaViolation:
    """One reason a message does not conform: where (`pointer`, RFC 6901) and why."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '(root)'}: {self.message}"


def _schema_text(name: str) -> str:
    return (
        resources.files("fakepeer.protocol")
        .joinpath(_SCHEMA_DIR, f"{name}.schema.json")
        .read_text(encoding="utf-8")
    )


@cache
def _load(name: str) -> dict[str, Any]:
    return json.loads(_schema_text(name))


def load_schema(kind: str) -> dict[str, Any]:
    """The schema document of a kind (or `common`), as a fresh dict the caller may modify."""
    if kind != COMMON and kind not in KINDS:
        raise KeyError(f"no schema for unknown kind {kind!r}")
    return json.loads(json.dumps(_load(kind)))


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    common = _load(COMMON)
    return Registry().with_resource(common["$id"], Resource.from_contents(common, DRAFT202012))


# ECMA-262 `$` means end of input; Python's also matches before a final newline.
_strict_regex = cache(strict_regex)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _strict_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator_class() -> Any:
    """Draft 2020-12 with the protocol's `integer` (jsonschema's admits 1.0; the protocol's
    does not: strictjson.is_integer) and ECMA-262 patterns."""
    from jsonschema import Draft202012Validator, validators

    types = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, instance: is_integer(instance)
    )
    return validators.extend(Draft202012Validator, {"pattern": _pattern}, type_checker=types)


@cache
def _validator(kind: str) -> Any:
    return _validator_class()(_load(kind), registry=_registry())


@cache
def _compiler() -> Compiler:
    documents = {_load(name)["$id"]: _load(name) for name in (COMMON, *KINDS)}
    return Compiler(documents)


@cache
def _fast_check(kind: str) -> Check:
    return _compiler().compile_document(_load(kind)["$id"])


#: What a kind's schema may say besides its envelope: annotations only.
_ENVELOPE_KEYS = {"$schema", "$id", "title", "description", "type", "required", "properties"}


@cache
def _standard_envelope(kind: str) -> bool:
    """Whether `kind`'s schema asks of the envelope only what §2 asks of every one: `version`
    and `id` as common.schema.json defines them, `kind` its own name, `body` as it says."""
    schema = _load(kind)
    properties = schema.get("properties", {})
    return (
        set(schema) <= _ENVELOPE_KEYS
        and schema.get("type") == "object"
        and schema.get("required") == ["version", "kind", "id", "body"]
        and set(properties) == {"version", "kind", "id", "body"}
        and properties["version"] == {"$ref": f"{COMMON}.schema.json#/$defs/version"}
        and properties["id"] == {"$ref": f"{COMMON}.schema.json#/$defs/id"}
        and properties["kind"] == {"const": kind}
    )


@cache
def _common_check(name: str) -> Check:
    return _compiler().compile_document(_load(COMMON)["$id"], f"/$defs/{name}")


def envelope_members_valid(envelope: dict[str, Any]) -> bool:
    """Whether `version` and `id` are valid and the kind's schema asks nothing else of the
    envelope: then a `body` that is a checked fixture expectation's makes the frame valid
    (compare.Comparer, a fast path: False only means "check the whole frame")."""
    kind = envelope.get("kind")
    return (
        isinstance(kind, str)
        and kind in KINDS
        and _standard_envelope(kind)
        and "version" in envelope
        and "id" in envelope
        and _common_check("version")(envelope["version"])
        and _common_check("id")(envelope["id"])
    )


def _pointer(path: Any) -> str:
    return join(path)


def _value_violations(envelope: dict[str, Any]) -> list[SchemaViolation]:
    for pointer, value in value_positions(envelope):
        try:
            validate_value(value, pointer)
        except ConversionError as exc:
            return [SchemaViolation(exc.pointer, f"{exc.category}: {exc.reason}")]
    return []


def _inside(pointer: str, root: str) -> bool:
    return pointer == root or pointer.startswith(root + "/")


def is_schema_valid(envelope: dict[str, Any]) -> bool:
    """Whether the kind's schema holds (no §3 value rules): the compiled predicate, microseconds;
    jsonschema itself when the fast paths are off."""
    if fastpath.enabled():
        return _fast_check(envelope["kind"])(envelope)
    return not schema_errors(envelope)


def schema_errors(envelope: dict[str, Any]) -> list[ValidationError]:
    """The raw `jsonschema` errors of a known kind (slow path; for detailed diagnostics)."""
    return list(_validator(envelope["kind"]).iter_errors(envelope))


def validate_message(envelope: dict[str, Any]) -> list[SchemaViolation]:
    """Every way `envelope` breaks its kind's schema or the §3 value rules; [] when valid.

    An envelope whose `kind` is missing or unknown gives one violation at `/kind`. Problems
    inside a tagged value are reported once per value, as §3.4 locates them (the innermost
    invalid tagged value, with the `protocol.*` category in the message). A document nested
    too deeply for recursive validation is reported through the value depth rule when a
    value is the culprit, else as one violation at the root.
    """
    kind = envelope.get("kind") if isinstance(envelope, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:
        return [SchemaViolation("/kind", f"unknown message kind {kind!r}")]
    try:
        if fastpath.enabled() and _fast_check(kind)(envelope):
            values = value_positions(envelope)
            if all(fastpath.surely_valid_value(value) for _, value in values):
                return []  # else the plain checks below decide and explain
        errors = [(_pointer(e.absolute_path), e.message) for e in schema_errors(envelope)]
    except RecursionError:
        return _value_violations(envelope) or [
            SchemaViolation("", "message nested too deeply to validate")
        ]
    violations = []
    for root, value in value_positions(envelope):
        if any(_inside(pointer, root) for pointer, _ in errors):
            try:
                validate_value(value, root)
            except ConversionError as exc:
                violations.append(SchemaViolation(exc.pointer, f"{exc.category}: {exc.reason}"))
                errors = [(p, m) for p, m in errors if not _inside(p, root)]
    violations += [SchemaViolation(pointer, message) for pointer, message in errors]
    if not violations:  # the schema found nothing after all; still apply the value rules
        violations = _value_violations(envelope)
    return sorted(violations, key=lambda v: v.pointer)


def export_schemas(out_dir: Path) -> list[Path]:
    """Write `common.schema.json` and one `<kind>.schema.json` per kind into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in (COMMON, *KINDS):
        path = out_dir / f"{name}.schema.json"
        atomic.write_text(path, _schema_text(name))
        written.append(path)
    return written
