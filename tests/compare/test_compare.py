"""Comparison: canonical fast path, vary patterns, derive, schema findings, diff text."""

from __future__ import annotations

import base64
import collections

import pytest

from fakepeer.cases import ExpectStep
from fakepeer.compare import (
    Comparer,
    VaryPattern,
    check_derived,
    compare_frame,
    diff_text,
    explain,
    plain_json,
    remove_varied,
)
from fakepeer.protocol.canonical import canonical_bytes, hash_bytes, hash_document


def _no_schema(envelope: dict) -> list:
    return []


def _step(kind: str, body: dict, vary=(), derive=()) -> ExpectStep:
    return ExpectStep(
        kind=kind, body=body, exchange_id="x#1", vary=tuple(vary), derive=tuple(derive)
    )


def _frame(kind: str, body: dict, version: str = "1.0") -> dict:
    return {"version": version, "kind": kind, "id": "x#1", "body": body}


def test_equal_frames_pass_regardless_of_key_order() -> None:
    step = _step("completed", {"value": {"t": "str", "v": "a"}})
    frame = _frame("completed", {"value": {"v": "a", "t": "str"}})
    assert compare_frame(step, frame, _no_schema) == []


def test_json_number_equality_follows_rfc8785() -> None:
    step = _step("x", {"attempt": 1})
    assert compare_frame(step, _frame("x", {"attempt": 1.0}), _no_schema) == []
    findings = compare_frame(step, _frame("x", {"attempt": True}), _no_schema)
    assert [f.pointer for f in findings] == ["/body/attempt"]


def test_unknown_members_in_actual_are_differences() -> None:
    findings = compare_frame(_step("x", {"a": 1}), _frame("x", {"a": 1, "b": 2}), _no_schema)
    assert [(f.kind, f.pointer) for f in findings] == [("value", "/body/b")]
    assert findings[0].message == "expected (absent), got 2"


def test_diff_lists_each_pointer_with_both_values() -> None:
    step = _step("declared", {"declaration": {"type": "step", "name": "a", "retry": [1, 2]}})
    frame = _frame("failed", {"declaration": {"type": "step", "name": "b", "retry": [1]}})
    text = diff_text(compare_frame(step, frame, _no_schema))
    assert text.splitlines() == [
        '[value] /body/declaration/name: expected "a", got "b"',
        "[value] /body/declaration/retry/1: expected 2, got (absent)",
        '[value] /kind: expected "declared", got "failed"',
    ]


def test_pointer_escaping_in_diffs() -> None:
    findings = explain({"a/b": {"c~d": 1}}, {"a/b": {"c~d": 2}})
    assert findings[0].pointer == "/a~1b/c~0d"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/body/error/message", ["body", "error", "message"], True),
        ("/body/*/message", ["body", "error", "message"], True),
        ("/body/*/message", ["body", "error", "x", "message"], False),
        ("/**/message", ["body", "error", "cause", "message"], True),
        ("/**/message", ["message"], True),
        ("/body/**", ["body"], True),
        ("/body/**/v", ["body", "a", "b", "v"], True),
        ("/body/**/v", ["body", "a", "b", "w"], False),
        ("/a~1b", ["a/b"], True),
    ],
)
def test_vary_patterns(pattern: str, path: list[str], matches: bool) -> None:
    assert VaryPattern(pattern).matches(path) is matches


def test_vary_removes_members_from_both_sides_and_presence_is_optional() -> None:
    step = _step(
        "protocol_error",
        {"error": {"category": "protocol.malformed", "message": "", "cause": {"message": "x"}}},
        vary=["/**/message"],
    )
    frame = _frame(
        "protocol_error",
        {"error": {"category": "protocol.malformed", "message": "bad frame", "cause": {}}},
    )
    assert compare_frame(step, frame, _no_schema) == []


def test_vary_array_elements_keep_later_indexes() -> None:
    document = {"body": {"a": [1, 2, 3]}}
    assert remove_varied(document, [VaryPattern("/body/a/0")]) == {
        "body": {"a": ["<varies>", 2, 3]}
    }
    step = _step("x", {"a": [0, 2, 3]}, vary=["/body/a/0"])
    assert compare_frame(step, _frame("x", {"a": [9, 2, 3]}), _no_schema) == []
    assert compare_frame(step, _frame("x", {"a": [9, 3, 2]}), _no_schema) != []


def test_remove_varied_does_not_mutate_inputs() -> None:
    document = {"body": {"error": {"message": "m"}}}
    remove_varied(document, [VaryPattern("/body/error/message")])
    assert document == {"body": {"error": {"message": "m"}}}


def test_version_must_be_1x() -> None:
    step = _step("x", {})
    assert compare_frame(step, _frame("x", {}, version="1.9"), _no_schema) == []
    findings = compare_frame(step, _frame("x", {}, version="2.0"), _no_schema)
    assert [(f.kind, f.pointer) for f in findings] == [("version", "/version")]


def test_schema_violations_are_their_own_kind_even_when_values_match() -> None:
    body = {"value": 5}  # not a tagged value
    findings = compare_frame(_step("completed", body), _frame("completed", body))
    assert findings and all(f.kind == "schema" for f in findings)


def test_real_validator_accepts_a_valid_frame() -> None:
    body = {"value": {"t": "null"}}
    assert compare_frame(_step("completed", body), _frame("completed", body)) == []


def _register_body(contents: bytes) -> dict:
    contract = {"protocol_major": 1, "value_codec": "ryusen.tagged/1", "capabilities": []}
    functions = ["conform.echo"]
    manifest_hash = hash_bytes(contents)
    group = "unversioned:" + hash_document(
        {"contract": contract, "functions": functions, "manifest_hash": manifest_hash}
    )
    return {
        "contract": contract,
        "functions": functions,
        "manifest_hash": manifest_hash,
        "contents": base64.b64encode(contents).decode(),
        "release": {"group": group},
    }


def test_derive_checks_computed_values() -> None:
    body = _register_body(b'{"format":"x"}')
    derive = [
        ("/body/release/group", "unversioned_group"),
        ("/body/manifest_hash", "manifest_hash"),
    ]
    assert check_derived(derive, _frame("register", body)) == []
    body["release"]["group"] = "unversioned:sha256:" + "0" * 64
    body["manifest_hash"] = "sha256:" + "1" * 64
    findings = check_derived(derive, _frame("register", body))
    assert [(f.kind, f.pointer) for f in findings] == [
        ("derive", "/body/release/group"),
        ("derive", "/body/manifest_hash"),
    ]


def test_derive_pointers_are_not_compared_as_values() -> None:
    body = _register_body(b"{}")
    step = _step(
        "register",
        {**body, "release": {"group": "whatever"}},
        derive=[("/body/release/group", "unversioned_group")],
    )
    assert compare_frame(step, _frame("register", body), _no_schema) == []


def test_derive_on_a_frame_lacking_members_is_a_finding() -> None:
    findings = check_derived([("/body/x", "manifest_hash")], _frame("register", {}))
    assert findings[0].kind == "derive" and "cannot compute" in findings[0].message


def test_comparer_caches_expected_side_per_step() -> None:
    comparer = Comparer(_no_schema)
    step = _step("x", {"a": 1})
    assert comparer.compare(step, _frame("x", {"a": 1})) == []
    assert comparer.compare(step, _frame("x", {"a": 2}))[0].pointer == "/body/a"
    assert canonical_bytes({"a": 1})  # the canonical module stays importable here


@pytest.mark.parametrize(
    ("expected", "actual", "equal"),
    [
        ({"a": ["x", {"b": None}]}, {"a": ["x", {"b": None}]}, True),
        ({"a": ["x", "y"]}, {"a": ["y", "x"]}, False),  # arrays keep their order
        ({"a": {"b": "1", "c": "2"}}, {"a": {"c": "2", "b": "1"}}, True),  # objects do not
        ({"a": "1"}, {"a": 1}, False),
        ({"a": None}, {"a": False}, False),
        ({"a": [True]}, {"a": [1]}, False),  # Python says True == 1: not JSON
        ({"a": [[1]]}, {"a": [[1.0]]}, True),  # RFC 8785: 1 and 1.0 are the same number
        ({"a": [0]}, {"a": [False]}, False),
        ({"a": {"b": [1, True]}}, {"a": {"b": [True, 1]}}, False),
        ({"a": []}, {"a": {}}, False),
    ],
)
def test_fast_equality_is_json_equality(expected: dict, actual: dict, equal: bool) -> None:
    findings = compare_frame(_step("x", expected), _frame("x", actual), _no_schema)
    assert (findings == []) is equal, findings


@pytest.mark.parametrize(
    ("document", "plain"),
    [
        ({"a": ["x", None, {"b": ""}]}, True),
        ({"a": [1]}, False),
        ({"a": 1.0}, False),
        ({"a": {"b": True}}, False),
        ([None, "x"], True),
        (collections.OrderedDict(a="x"), False),  # not a plain dict: decided the slow way
    ],
)
def test_plain_json_spots_numbers_and_bools(document: object, plain: bool) -> None:
    assert plain_json(document) is plain


def test_fast_path_does_not_hide_a_mismatch_behind_a_cache() -> None:
    comparer = Comparer(_no_schema)
    step = _step("x", {"v": {"t": "str", "v": "a"}})
    assert comparer.compare(step, _frame("x", {"v": {"t": "str", "v": "a"}})) == []
    findings = comparer.compare(step, _frame("x", {"v": {"t": "str", "v": "b"}}))
    assert [f.pointer for f in findings] == ["/body/v/v"]
    assert comparer.compare(step, _frame("x", {"v": {"v": "a", "t": "str"}})) == []


@pytest.mark.parametrize("key", ["__proto__", "__init__", "constructor", ""])
def test_no_key_is_hidden_from_an_explanation(key: str) -> None:
    """deepdiff hides `__x` keys by default; a missing `__proto__` must still be named."""
    expected = {"metadata": {key: "x", "kept": "y"}}
    missing = explain(expected, {"metadata": {"kept": "y"}})
    assert [f.pointer for f in missing] == [f"/metadata/{key}"]
    assert "(absent)" in missing[0].message
    changed = explain(expected, {"metadata": {key: "z", "kept": "y"}})
    assert [f.pointer for f in changed] == [f"/metadata/{key}"]
    assert 'expected "x", got "z"' in changed[0].message
