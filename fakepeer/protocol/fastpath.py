"""The bench's speed machinery, fenced in one module behind one switch.

Why: the bench checks every SDK frame against its kind's JSON Schema and the §3 value rules;
done plainly (jsonschema with `$ref`, `validate_value`) that is most of a case's cost. Each fast
path here may only say "surely valid"; anything else goes to the plain check, which decides and
explains. What lives here:

- `Compiler`: the JSON Schema subset our schemas use, translated to Python predicates (one
  function per `$ref` target, every keyword an inline statement), so a frame is checked in a
  few microseconds. Any keyword outside the subset is a compile error, so no rule is ignored.
- `surely_valid_value`: a sufficient test of the §3 value rules (a second copy of them, walked
  without building pointers, with an upper bound of the canonical size instead of encoding).

Smaller fast paths elsewhere ask `enabled()` first: a reset's `conform.ack` and an empty
`conform.trace` answer compared as bytes before decoding (session/sdk.py, session/case.py), and
old objects frozen out of the collector during a run (suite/runner.py); the comparer tries Python
`==` and sorted JSON text before RFC 8785, takes an answer that is a checked expectation byte for
byte in the usual spelling without decoding it, and does not validate again an answer identical
to a checked expectation, whose kind and body passed every check when the fixture loaded
(compare.py, `ExpectStep.checked`).

The switch: `RYUSEN_CONFORM_FAST_PATHS=0` in the environment, or `disabled()` in a test, turns
every fast path off. tests/test_fast_paths.py runs the whole corpus both ways and requires the same
result for every case; bench/bench_session.py measures what the fast paths buy.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from fakepeer.protocol.limits import I64_MAX, I64_MIN, MAX_DEPTH, MAX_VALUE_BYTES, U64_MAX
from fakepeer.protocol.pointer import split
from fakepeer.protocol.strictjson import is_integer
from fakepeer.protocol.values import decode_bytes_text, parse_f64, parse_int_text

_switch = {"on": os.environ.get("RYUSEN_CONFORM_FAST_PATHS", "1") != "0"}


def enabled() -> bool:
    """Whether the fast paths are on (they are, unless RYUSEN_CONFORM_FAST_PATHS=0)."""
    return _switch["on"]


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Turn every fast path off inside the block (for the tests that compare both paths)."""
    before, _switch["on"] = _switch["on"], False
    try:
        yield
    finally:
        _switch["on"] = before


Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "title", "description", "examples", "$comment", "default"}
)
#: Keywords whose schema is small and flat enough to be copied into the referring function.
_INLINABLE = frozenset(
    {"type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum"}
)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


#: The source text of each type test, applied to a variable name.
_TYPE_TESTS = {
    "object": "isinstance({0}, dict)",
    "array": "isinstance({0}, list)",
    "string": "isinstance({0}, str)",
    "boolean": "isinstance({0}, bool)",
    "null": "{0} is None",
    "integer": "_is_integer({0})",
    "number": "_is_number({0})",
}


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _enum(x: Any, options: tuple[Any, ...]) -> bool:
    return any(_equal(x, option) for option in options)


def _unique(x: Any) -> bool:
    if not isinstance(x, list):
        return True
    if all(isinstance(item, str) for item in x):
        return len(set(x)) == len(x)
    return not any(_equal(x[i], x[j]) for i in range(len(x)) for j in range(i + 1, len(x)))


#: The schemas' canonical padded base64 (§3.3). `re` runs the `(?:[...]{4})*` group once per
#: four characters (about 80 ms for a 1 MiB value, twice per check); `_Base64` decides the same
#: language with one character class and the rule for the last group's unused bits.
CANONICAL_BASE64 = (
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$"
)
_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/]*")


class _Base64:
    """`strict_regex(CANONICAL_BASE64)`: `search(text)` is truthy exactly when the regex matches."""

    pattern = CANONICAL_BASE64

    @staticmethod
    def search(text: str) -> bool | None:
        if len(text) % 4:
            return None
        body = text.rstrip("=")
        padding = len(text) - len(body)
        if padding > 2 or not _BASE64_CHARS.fullmatch(body):
            return None
        if padding == 2 and body[-1] not in "AQgw":
            return None
        if padding == 1 and body[-1] not in "AEIMQUYcgkosw048":
            return None
        return True


def strict_regex(pattern: str) -> re.Pattern[str] | _Base64:
    """Compile an ECMA-262 pattern for `search`, where a final `$` means end of input."""
    if pattern == CANONICAL_BASE64:
        return _Base64()
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


class _Function:
    """The source lines of one generated predicate, with its own variable counter."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines = [f"def {name}(x):"]
        self._variables = 0

    def variable(self) -> str:
        self._variables += 1
        return f"v{self._variables}"

    def fail_if(self, condition: str, indent: int) -> None:
        self.lines.append(f"{'    ' * indent}if {condition}: return False")

    def line(self, text: str, indent: int) -> None:
        self.lines.append(f"{'    ' * indent}{text}")

    def source(self) -> str:
        return "\n".join([*self.lines, "    return True", ""])


class Compiler:
    """Compiles schemas of a set of documents (by `$id`) into predicates, sharing `$ref` targets."""

    def __init__(self, documents: Mapping[str, dict[str, Any]]) -> None:
        self._documents = dict(documents)
        self._names: dict[tuple[str, str], str] = {}  # ref target -> its function's name
        self._pending: list[tuple[str, Any, str]] = []  # (name, schema, base) to generate
        self._namespace: dict[str, Any] = {
            "_is_integer": is_integer,
            "_is_number": _is_number,
            "_equal": _equal,
            "_enum": _enum,
            "_unique": _unique,
        }
        self._count = 0
        #: Dispatch tables to fill with functions once they are defined: (table, tag -> name).
        self._fixups: list[tuple[dict[str, Check], dict[str, str]]] = []
        self._lock = threading.Lock()  # jobs may compile their first frames' kinds at once

    def compile_document(self, uri: str, fragment: str = "") -> Check:
        """The predicate of a whole document, or of the subschema at `fragment` (`/$defs/id`)."""
        with self._lock:
            name = self._ref_name(uri, fragment)
            self._generate()
            return self._namespace[name]  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ functions

    def _generate(self) -> None:
        """Write every pending function, then define them all at once (they call each other)."""
        sources = []
        while self._pending:
            name, schema, base = self._pending.pop()
            function = _Function(name)
            self._emit(function, schema, base, "x", None, 1)
            sources.append(function.source())
        exec("\n".join(sources), self._namespace)  # noqa: S102 - source generated above
        for table, names in self._fixups:
            table.update((tag, self._namespace[name]) for tag, name in names.items())
        self._fixups.clear()

    def _fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def _constant(self, value: Any) -> str:
        name = self._fresh("K")
        self._namespace[name] = value
        return name

    def _function(self, schema: Any, base: str) -> str:
        """The name of a predicate for a subschema (a `$ref` alone names its target's)."""
        if isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"$ref"}:
            uri, fragment, _ = self._target(schema["$ref"], base)
            return self._ref_name(uri, fragment)
        name = self._fresh("s")
        self._pending.append((name, schema, base))
        return name

    def _target(self, ref: str, base: str) -> tuple[str, str, Any]:
        target, _, fragment = ref.partition("#")
        if target:
            uri = base.rsplit("/", 1)[0] + "/" + target if "://" not in target else target
        else:
            uri = base
        if uri not in self._documents:
            raise KeyError(f"unresolvable $ref {ref!r} from {base!r}")
        node: Any = self._documents[uri]
        for token in split(fragment):
            node = node[token]
        return uri, fragment, node

    def _ref_name(self, uri: str, fragment: str) -> str:
        key = (uri, fragment)
        if key not in self._names:
            self._names[key] = name = self._fresh("r")
            _, _, node = self._target(f"{uri}#{fragment}", uri)
            self._pending.append((name, node, uri))
        return self._names[key]

    # ------------------------------------------------------------------ statements

    def _emit(
        self, fn: _Function, schema: Any, base: str, var: str, known: str | None, indent: int
    ) -> None:
        """Append statements returning False unless `var` satisfies `schema`.

        `known` names the JSON type `var` is already known to have, so its guards are skipped.
        """
        if schema is True:
            return
        if schema is False:
            fn.line("return False", indent)
            return
        required: tuple[str, ...] = ()
        for keyword, arg in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue
            if keyword == "type":
                names = [arg] if isinstance(arg, str) else list(arg)
                if known is None or known not in names:
                    tests = " or ".join(_TYPE_TESTS[name].format(var) for name in names)
                    fn.fail_if(f"not ({tests})", indent)
                if len(names) == 1 and names[0] in ("object", "array", "string"):
                    known = names[0]
            elif keyword == "required":
                required = tuple(arg)
                self._required(fn, required, var, known, indent)
            else:
                self._keyword(fn, keyword, arg, schema, base, var, known, indent, required)

    def _guarded(self, fn: _Function, kind: str, var: str, known: str | None, indent: int) -> int:
        """Open `if isinstance(var, kind):` unless known; return the indent of the body."""
        if known == kind:
            return indent
        fn.line(f"if {_TYPE_TESTS[kind].format(var)}:", indent)
        fn.line("pass", indent + 1)  # the body may turn out empty
        return indent + 1

    def _required(
        self, fn: _Function, names: tuple[str, ...], var: str, known: str | None, indent: int
    ) -> None:
        if not names:
            return
        test = " or ".join(f"{name!r} not in {var}" for name in names)
        if known == "object":
            fn.fail_if(test, indent)
        else:
            fn.fail_if(f"isinstance({var}, dict) and ({test})", indent)

    def _keyword(
        self,
        fn: _Function,
        keyword: str,
        arg: Any,
        schema: dict[str, Any],
        base: str,
        var: str,
        known: str | None,
        indent: int,
        required: tuple[str, ...],
    ) -> None:
        string = "" if known == "string" else f"isinstance({var}, str) and "
        if keyword == "$ref":
            self._ref(fn, arg, base, var, known, indent)
        elif keyword == "enum":
            if all(isinstance(option, str) for option in arg):
                options = self._constant(frozenset(arg))
                fn.fail_if(f"not (isinstance({var}, str) and {var} in {options})", indent)
            else:
                fn.fail_if(f"not _enum({var}, {self._constant(tuple(arg))})", indent)
        elif keyword == "const":
            if isinstance(arg, str):
                fn.fail_if(f"not (isinstance({var}, str) and {var} == {arg!r})", indent)
            else:
                fn.fail_if(f"not _equal({var}, {self._constant(arg)})", indent)
        elif keyword == "pattern":
            search = self._constant(strict_regex(arg).search)
            fn.fail_if(f"{string}{search}({var}) is None", indent)
        elif keyword == "minLength":
            fn.fail_if(f"{string}len({var}) < {int(arg)}", indent)
        elif keyword == "maxLength":
            fn.fail_if(f"{string}len({var}) > {int(arg)}", indent)
        elif keyword in ("minimum", "maximum"):
            bound = self._constant(arg)
            test = f"{var} < {bound}" if keyword == "minimum" else f"{var} > {bound}"
            fn.fail_if(f"_is_number({var}) and {test}", indent)
        elif keyword == "minItems":
            list_test = "" if known == "array" else f"isinstance({var}, list) and "
            fn.fail_if(f"{list_test}len({var}) < {int(arg)}", indent)
        elif keyword == "uniqueItems":
            if arg:
                fn.fail_if(f"not _unique({var})", indent)
        elif keyword == "properties":
            self._properties(fn, arg, base, var, known, indent, required)
        elif keyword == "additionalProperties":
            self._additional(fn, arg, schema, base, var, known, indent)
        elif keyword == "items":
            body = self._guarded(fn, "array", var, known, indent)
            item = fn.variable()
            fn.line(f"for {item} in {var}:", body)
            fn.line("pass", body + 1)
            self._emit(fn, arg, base, item, None, body + 1)
        elif keyword == "allOf":
            if not self._discriminated(fn, arg, base, var, known, indent):
                for sub in arg:
                    self._emit(fn, sub, base, var, known, indent)
        elif keyword == "anyOf":
            calls = " or ".join(f"{self._function(sub, base)}({var})" for sub in arg)
            fn.fail_if(f"not ({calls})", indent)
        elif keyword == "oneOf":
            calls = " + ".join(f"bool({self._function(sub, base)}({var}))" for sub in arg)
            fn.fail_if(f"({calls}) != 1", indent)
        elif keyword == "not":
            fn.fail_if(f"{self._function(arg, base)}({var})", indent)
        elif keyword == "if":
            fn.line(f"if {self._function(arg, base)}({var}):", indent)
            fn.line("pass", indent + 1)
            self._emit(fn, schema.get("then", True), base, var, known, indent + 1)
            fn.line("else:", indent)
            fn.line("pass", indent + 1)
            self._emit(fn, schema.get("else", True), base, var, known, indent + 1)
        else:
            raise ValueError(f"keyword {keyword!r} is outside the compiled subset")

    def _ref(
        self, fn: _Function, ref: str, base: str, var: str, known: str | None, indent: int
    ) -> None:
        """Copy a small flat target (e.g. `non_empty_string`) inline; call anything else."""
        uri, fragment, node = self._target(ref, base)
        if isinstance(node, dict) and set(node) - _ANNOTATIONS <= _INLINABLE:
            self._emit(fn, node, uri, var, known, indent)
            return
        fn.fail_if(f"not {self._ref_name(uri, fragment)}({var})", indent)

    def _properties(
        self,
        fn: _Function,
        props: dict[str, Any],
        base: str,
        var: str,
        known: str | None,
        indent: int,
        required: tuple[str, ...],
    ) -> None:
        present = set(required)  # `required` returned False already if one was missing
        body = self._guarded(fn, "object", var, known, indent)
        for name, sub in props.items():
            if sub is True or sub == {}:
                continue
            value = fn.variable()
            inner = body
            if name in present:
                fn.line(f"{value} = {var}[{name!r}]", body)
            else:
                fn.line(f"if {name!r} in {var}:", body)
                fn.line(f"{value} = {var}[{name!r}]", body + 1)
                inner = body + 1
            self._emit(fn, sub, base, value, None, inner)

    def _additional(
        self,
        fn: _Function,
        extra: Any,
        schema: dict[str, Any],
        base: str,
        var: str,
        known: str | None,
        indent: int,
    ) -> None:
        names = self._constant(frozenset(schema.get("properties", {})))
        body = self._guarded(fn, "object", var, known, indent)
        if extra is False:
            fn.fail_if(f"not {names}.issuperset({var})", body)
            return
        key, value = fn.variable(), fn.variable()
        fn.line(f"for {key}, {value} in {var}.items():", body)
        fn.line(f"if {key} not in {names}:", body + 1)
        fn.line("pass", body + 2)
        self._emit(fn, extra, base, value, None, body + 2)

    def _discriminated(
        self,
        fn: _Function,
        branches: list[Any],
        base: str,
        var: str,
        known: str | None,
        indent: int,
    ) -> bool:
        """Compile `allOf: [{if: {required: [k], properties: {k: {const: c}}}, then: S}, ...]`.

        On an object only the branch whose constant matches can apply, so look it up instead of
        testing every condition. Non-objects satisfy every condition vacuously: test them all.
        Returns False (emitting nothing) when the branches do not have that shape.
        """
        member = None
        table: dict[str, Any] = {}
        for branch in branches:
            condition = branch.get("if") if isinstance(branch, dict) else None
            if set(branch) - {"if", "then"} or not isinstance(condition, dict):
                return False
            props = condition.get("properties", {})
            if set(condition) != {"required", "properties"} or len(props) != 1:
                return False
            (name,) = props
            const = props[name]
            if condition["required"] != [name] or set(const) != {"const"}:
                return False
            if not isinstance(const["const"], str) or (member is not None and name != member):
                return False
            member = name
            table[const["const"]] = branch.get("then", True)
        if member is None:
            return False
        checks = {tag: self._function(then, base) for tag, then in table.items()}
        lookup: dict[str, Check] = {}
        self._fixups.append((lookup, checks))
        table_name = self._constant(lookup)
        tag = fn.variable()
        check = fn.variable()
        body = indent
        if known != "object":
            fn.line(f"if isinstance({var}, dict):", indent)
            body = indent + 1
        fn.line(f"{tag} = {var}.get({member!r})", body)
        fn.line(f"if isinstance({tag}, str):", body)
        fn.line(f"{check} = {table_name}.get({tag})", body + 1)
        fn.fail_if(f"{check} is not None and not {check}({var})", body + 1)
        if known != "object":
            fn.line("else:", indent)
            every = " and ".join(f"{name}({var})" for name in checks.values())
            fn.fail_if(f"not ({every})", indent + 1)
        return True


# ----------------------------------------------------------------------------- §3 values


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


def surely_valid_value(doc: Any) -> bool:
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
