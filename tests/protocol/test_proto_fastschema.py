"""The schema-to-Python compiler agrees with `jsonschema` on every keyword of its subset."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakepeer.protocol import schema as schema_module
from fakepeer.protocol.fastpath import Compiler

BASE = "https://example.test/s/"

SCHEMAS: list[dict[str, Any]] = [
    {"type": ["string", "null"], "minLength": 1, "maxLength": 2},
    {"type": "integer", "minimum": 0, "maximum": 3},
    {"type": "number", "minimum": -1.5},
    {"enum": ["a", "b"]},
    {"enum": [1, True, None, [1], {"a": 1}]},
    {"const": {"a": [1, "x"]}},
    {"const": "x"},
    {"pattern": "^a+$"},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
    {"items": True, "uniqueItems": True},
    {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string"}, "b": {}, "c": True},
        "additionalProperties": {"type": "boolean"},
    },
    {"properties": {"a": {}}, "additionalProperties": False},
    {"anyOf": [{"type": "string"}, {"required": ["a"]}]},
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"not": {"type": "array"}},
    {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"type": "object"}},
    {
        "allOf": [
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "s"}}},
                "then": {"$ref": "#/$defs/s"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "n"}}},
                "then": {"$ref": "#/$defs/n"},
            },
        ],
        "$defs": {
            "s": {"properties": {"v": {"type": "string"}}, "required": ["v"]},
            "n": {"properties": {"v": {"type": "null"}}},
        },
    },
    {
        "type": "object",
        "properties": {"next": {"$ref": "#"}, "v": {"$ref": "#/$defs/small"}},
        "$defs": {"small": {"type": "integer", "maximum": 1}},
    },
]

JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 4),
        st.sampled_from([0.0, 1.0, 1.5, -1.5, -2.0]),
        st.sampled_from(["", "a", "aa", "aaa", "b", "s", "n", "x", "a\n"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c", "t", "v", "next"]), inner, max_size=3),
    ),
    max_leaves=8,
)


def _compile(index: int) -> Any:
    uri = f"{BASE}{index}.json"
    document = {"$id": uri, **SCHEMAS[index]}
    # The bench's jsonschema validator: ECMA-262 `$` (end of input) in patterns.
    return Compiler({uri: document}).compile_document(uri), schema_module._validator_class()(
        document
    )


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@settings(max_examples=150, deadline=None)
@given(instance=JSONISH)
def test_compiled_predicate_agrees_with_jsonschema(index: int, instance: Any) -> None:
    check, validator = _compile(index)
    assert check(instance) == validator.is_valid(instance), (SCHEMAS[index], instance)


EDGES: list[Any] = [
    "a\n",
    True,
    1,
    1.0,
    [1, True],
    [1, 1.0],
    {"a": "x", "b": 1},
    {"t": "s"},
    {"t": "s", "v": None},
    {"t": "n", "v": None},
    {"next": {"next": {"v": 2}}},
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_compiled_predicate_agrees_on_edge_instances(index: int) -> None:
    check, validator = _compile(index)
    for instance in EDGES:
        assert check(instance) == validator.is_valid(instance), (SCHEMAS[index], instance)


def test_unknown_keywords_are_compile_errors() -> None:
    uri = f"{BASE}bad.json"
    with pytest.raises(ValueError, match="patternProperties"):
        Compiler({uri: {"$id": uri, "patternProperties": {}}}).compile_document(uri)


@pytest.mark.parametrize("value", [1.0, -0.0, 3e0, True])
def test_a_count_with_a_fraction_is_no_integer(value: Any) -> None:
    """docs/protocol.md §2: `1.0` is not an integer; both checkers refuse it (question 6 of #9)."""
    index = SCHEMAS.index({"type": "integer", "minimum": 0, "maximum": 3})
    check, validator = _compile(index)
    assert not check(value)
    assert not validator.is_valid(value)
    assert check(1) and validator.is_valid(1)
