"""JSON Schemas of every message kind (docs/protocol.md §14) and a fast cached validator.

The schema files in `schemas/` are the published, machine-readable surface; `validate_message`
is on the bench's hot path (every SDK frame), so validators are built once per kind and the
deep value checks of §3 (canonical f64 text, depth, size) are delegated to `values.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from fakepeer import atomic
from fakepeer.protocol._fastschema import Check, Compiler, strict_regex
from fakepeer.protocol.limits import I64_MAX, I64_MIN, MAX_DEPTH, MAX_VALUE_BYTES, U64_MAX
from fakepeer.protocol.messages import KINDS, value_positions
from fakepeer.protocol.values import (
    ConversionError,
    decode_bytes_text,
    escape_pointer_token,
    parse_f64,
    parse_int_text,
    validate_value,
)

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
    common = _load(COMMON)
    return Registry().with_resource(common["$id"], Resource.from_contents(common, DRAFT202012))


# ECMA-262 `$` means end of input; Python's also matches before a final newline.
_strict_regex = cache(strict_regex)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _strict_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = validators.extend(Draft202012Validator, {"pattern": _pattern})


@cache
def _validator(kind: str) -> Any:
    return _Validator(_load(kind), registry=_registry())


@cache
def _compiler() -> Compiler:
    documents = {_load(name)["$id"]: _load(name) for name in (COMMON, *KINDS)}
    return Compiler(documents)


@cache
def _fast_check(kind: str) -> Check:
    return _compiler().compile_document(_load(kind)["$id"])


def _pointer(path: Any) -> str:
    return "".join("/" + escape_pointer_token(str(part)) for part in path)


def _value_violations(envelope: dict[str, Any]) -> list[SchemaViolation]:
    for pointer, value in value_positions(envelope):
        try:
            validate_value(value, pointer)
        except ConversionError as exc:
            return [SchemaViolation(exc.pointer, f"{exc.category}: {exc.reason}")]
    return []


#: Longer than any canonical f64 text (`-2.2250738585072014e-308` is 24): not cached.
_F64_TEXT_CHARS = 32


@lru_cache(maxsize=4096)
def _canonical_f64(text: str) -> bool:
    """Memoised: the same few numbers recur across frames, and `format_f64` is Python."""
    return parse_f64(text) is not None


def _clean_text(text: str) -> bool:
    """No lone surrogate (they cannot be encoded as UTF-8)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_I64_TAGS = frozenset({"i64", "instant", "duration"})
#: Canonical bytes of a tagged value's own members beyond its payload text, with a comma:
#: `{"t":"duration","v":""},` is 24; 32 leaves room. A payload character takes at most 6.
_NODE_BYTES = 32
_CHAR_BYTES = 6


def _surely_valid_value(doc: Any) -> bool:
    """A sufficient test that `validate_value(doc)` raises nothing; False means "ask it".

    The same rules (§3.1-§3.3, depth), walked without building pointers, and an upper bound of
    the canonical size instead of encoding it. Blobs and anything unusual go to the full check.
    """
    bound = 0
    stack = [(doc, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        if type(node) is not dict or level > MAX_DEPTH:
            return False
        tag = node.get("t")
        bound += _NODE_BYTES
        if tag == "null":
            if len(node) != 1:
                return False
            continue
        if len(node) != 2 or "v" not in node:
            return False
        payload = node["v"]
        kind = type(payload)
        if tag == "str":
            if kind is not str or not (payload.isascii() or _clean_text(payload)):
                return False
            bound += _CHAR_BYTES * len(payload)
        elif tag == "object":
            if kind is not dict:
                return False
            for key, item in payload.items():
                if type(key) is not str or not (key.isascii() or _clean_text(key)):
                    return False
                bound += _CHAR_BYTES * len(key) + 4
                push((item, level + 1))
        elif tag == "array":
            if kind is not list:
                return False
            bound += len(payload)
            for item in payload:
                push((item, level + 1))
        elif tag in _I64_TAGS:
            if kind is not str or parse_int_text(payload, I64_MIN, I64_MAX) is None:
                return False
            bound += len(payload)
        elif tag == "u64":
            if kind is not str or parse_int_text(payload, 0, U64_MAX) is None:
                return False
            bound += len(payload)
        elif tag == "f64":
            if kind is not str or len(payload) > _F64_TEXT_CHARS or not _canonical_f64(payload):
                return False
            bound += len(payload)
        elif tag == "bool":
            if kind is not bool:
                return False
        elif tag == "bytes":
            if kind is not str or decode_bytes_text(payload) is None:
                return False
            bound += len(payload)
        else:  # blob, or not a tag: the full check decides and explains
            return False
    return bound <= MAX_VALUE_BYTES


def _inside(pointer: str, root: str) -> bool:
    return pointer == root or pointer.startswith(root + "/")


def is_schema_valid(envelope: dict[str, Any]) -> bool:
    """The compiled yes/no answer of the kind's schema (no §3 value rules); microseconds."""
    return _fast_check(envelope["kind"])(envelope)


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
        if _fast_check(kind)(envelope):
            for _, value in value_positions(envelope):
                if not _surely_valid_value(value):
                    return _value_violations(envelope)
            return []
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
