"""A small compiler from the JSON Schema subset our schemas use to a yes/no Python predicate.

Why: `jsonschema` with `$ref` costs about a millisecond per `invoke`, and the bench validates
every SDK frame. The compiled predicate answers "valid?" in microseconds; only when it says no does
`schema.py` ask `jsonschema` for the detailed, pointer-located errors. Tests check both agree.
Any keyword outside the subset is a compile error, so the predicate never ignores a rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "title", "description", "examples", "$comment", "default"}
)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": _is_integer,
    "number": lambda x: isinstance(x, int | float) and not isinstance(x, bool),
}


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if _TYPES["number"](a) and _TYPES["number"](b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def strict_regex(pattern: str) -> re.Pattern[str]:
    """Compile an ECMA-262 pattern for `search`, where a final `$` means end of input."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


class Compiler:
    """Compiles schemas of a set of documents (by `$id`) into predicates, sharing `$ref` targets."""

    def __init__(self, documents: Mapping[str, dict[str, Any]]) -> None:
        self._documents = dict(documents)
        self._compiled: dict[tuple[str, str], Check] = {}

    def compile_document(self, uri: str) -> Check:
        """The predicate of a whole document."""
        return self._ref_target(uri, "")

    def _ref_target(self, uri: str, fragment: str) -> Check:
        key = (uri, fragment)
        if key not in self._compiled:
            cell: list[Check] = []
            self._compiled[key] = lambda x: cell[0](x)  # placeholder for recursion
            node: Any = self._documents[uri]
            for token in fragment.split("/")[1:]:
                node = node[token.replace("~1", "/").replace("~0", "~")]
            cell.append(self._compile(node, uri))
        return self._compiled[key]

    def _resolve(self, ref: str, base: str) -> Check:
        target, _, fragment = ref.partition("#")
        if target:
            uri = base.rsplit("/", 1)[0] + "/" + target if "://" not in target else target
        else:
            uri = base
        if uri not in self._documents:
            raise KeyError(f"unresolvable $ref {ref!r} from {base!r}")
        return self._ref_target(uri, fragment)

    def _compile(self, schema: Any, base: str) -> Check:
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        checks: list[Check] = []
        for keyword, arg in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue
            checks.append(self._keyword(keyword, arg, schema, base))
        return _all_of(checks)

    def _keyword(self, keyword: str, arg: Any, schema: dict[str, Any], base: str) -> Check:
        if keyword == "$ref":
            return self._resolve(arg, base)
        if keyword == "type":
            names = [arg] if isinstance(arg, str) else list(arg)
            tests = tuple(_TYPES[name] for name in names)
            return lambda x: any(test(x) for test in tests)
        if keyword == "enum":
            if all(isinstance(option, str) for option in arg):
                strings = frozenset(arg)
                return lambda x: isinstance(x, str) and x in strings
            options = tuple(arg)
            return lambda x: any(_equal(x, option) for option in options)
        if keyword == "const":
            if isinstance(arg, str):
                return lambda x: x == arg and isinstance(x, str)
            return lambda x: _equal(x, arg)
        if keyword == "pattern":
            search = strict_regex(arg).search
            return lambda x: not isinstance(x, str) or search(x) is not None
        if keyword == "minLength":
            return lambda x: not isinstance(x, str) or len(x) >= arg
        if keyword == "maxLength":
            return lambda x: not isinstance(x, str) or len(x) <= arg
        if keyword in ("minimum", "maximum"):
            number = _TYPES["number"]
            if keyword == "minimum":
                return lambda x: not number(x) or x >= arg
            return lambda x: not number(x) or x <= arg
        if keyword == "minItems":
            return lambda x: not isinstance(x, list) or len(x) >= arg
        if keyword == "uniqueItems":
            return _unique if arg else (lambda x: True)
        if keyword == "required":
            names = tuple(arg)
            return lambda x: not isinstance(x, dict) or all(name in x for name in names)
        if keyword == "properties":
            props = tuple((name, self._compile(sub, base)) for name, sub in arg.items())

            def properties(x: Any) -> bool:
                if isinstance(x, dict):
                    for name, check in props:
                        if name in x and not check(x[name]):
                            return False
                return True

            return properties
        if keyword == "additionalProperties":
            known = frozenset(schema.get("properties", {}))
            extra = self._compile(arg, base)
            return lambda x: (
                not isinstance(x, dict)
                or all(extra(value) for key, value in x.items() if key not in known)
            )
        if keyword == "items":
            item = self._compile(arg, base)
            return lambda x: not isinstance(x, list) or all(item(value) for value in x)
        if keyword == "allOf" and (dispatch := self._discriminated(arg, base)) is not None:
            return dispatch
        if keyword in ("allOf", "anyOf", "oneOf"):
            subs = tuple(self._compile(sub, base) for sub in arg)
            if keyword == "allOf":
                return _all_of(list(subs))
            if keyword == "anyOf":
                return lambda x: any(sub(x) for sub in subs)
            return lambda x: sum(1 for sub in subs if sub(x)) == 1
        if keyword == "not":
            sub = self._compile(arg, base)
            return lambda x: not sub(x)
        if keyword == "if":
            condition = self._compile(arg, base)
            then = self._compile(schema.get("then", True), base)
            otherwise = self._compile(schema.get("else", True), base)
            return lambda x: then(x) if condition(x) else otherwise(x)
        raise ValueError(f"keyword {keyword!r} is outside the compiled subset")

    def _discriminated(self, branches: list[Any], base: str) -> Check | None:
        """Compile `allOf: [{if: {required: [k], properties: {k: {const: c}}}, then: S}, ...]`.

        On an object only the branch whose constant matches can apply, so look it up instead of
        testing every condition. Non-objects satisfy every condition vacuously: test them all.
        """
        member = None
        table: dict[str, Check] = {}
        for branch in branches:
            condition = branch.get("if") if isinstance(branch, dict) else None
            if set(branch) - {"if", "then"} or not isinstance(condition, dict):
                return None
            props = condition.get("properties", {})
            if set(condition) != {"required", "properties"} or len(props) != 1:
                return None
            (name,) = props
            const = props[name]
            if condition["required"] != [name] or set(const) != {"const"}:
                return None
            if not isinstance(const["const"], str) or (member is not None and name != member):
                return None
            member = name
            table[const["const"]] = self._compile(branch.get("then", True), base)
        if member is None:
            return None
        everything = _all_of(list(table.values()))
        key = member

        def dispatch(x: Any) -> bool:
            if not isinstance(x, dict):
                return everything(x)
            if key not in x:
                return True
            tag = x[key]
            if isinstance(tag, str):
                check = table.get(tag)
                return True if check is None else check(x)
            return True

        return dispatch


def _all_of(checks: list[Check]) -> Check:
    """Conjunction of predicates, without generator overhead for the common small cases."""
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda x: a(x) and b(x)
    if len(checks) == 3:
        a, b, c = checks
        return lambda x: a(x) and b(x) and c(x)
    head, rest = _all_of(checks[:3]), _all_of(checks[3:])
    return lambda x: head(x) and rest(x)


def _unique(x: Any) -> bool:
    if not isinstance(x, list):
        return True
    if all(isinstance(item, str) for item in x):
        return len(set(x)) == len(x)
    return not any(_equal(x[i], x[j]) for i in range(len(x)) for j in range(i + 1, len(x)))
