"""The per-kind JSON Schemas (§14) and `validate_message`."""

from __future__ import annotations

import base64
import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fakepeer.protocol import schema as schema_module
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.schema import SchemaViolation, export_schemas, load_schema, validate_message

SCHEMA_DIR = Path(schema_module.__file__).parent / "schemas"


def _jsonschema_errors(envelope: dict[str, Any], kind: str | None = None) -> list[Any]:
    validator = schema_module._validator(kind or envelope["kind"])
    return list(validator.iter_errors(envelope))


def test_every_kind_has_a_schema_and_nothing_else() -> None:
    names = {path.name for path in SCHEMA_DIR.glob("*.json")}
    assert names == {f"{kind}.schema.json" for kind in KINDS} | {"common.schema.json"}


@pytest.mark.parametrize("name", ["common", *KINDS])
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    document = load_schema(name)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    if name != "common":
        assert document["properties"]["kind"] == {"const": name}
        assert document["required"] == ["version", "kind", "id", "body"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_catalog_examples_validate(kind: str) -> None:
    example = KINDS[kind].example
    assert validate_message(example) == []
    assert _jsonschema_errors(example) == []
    assert schema_module._fast_check(kind)(example)


def test_load_schema_returns_a_copy_and_refuses_unknown_kinds() -> None:
    load_schema("invoke")["title"] = "changed"
    assert load_schema("invoke")["title"] != "changed"
    with pytest.raises(KeyError):
        load_schema("nope")


def test_unknown_kind_is_one_violation() -> None:
    assert validate_message({"kind": "nope"}) == [
        SchemaViolation("/kind", "unknown message kind 'nope'")
    ]
    assert len(validate_message({})) == 1


def _example(kind: str) -> dict[str, Any]:
    return copy.deepcopy(KINDS[kind].example)


def _set(doc: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    *parents, last = pointer.strip("/").split("/")
    node: Any = doc
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


_DELETE = object()

INVALID = [
    ("invoke", "/version", "1"),
    ("invoke", "/version", "1.0\n"),
    ("invoke", "/id", ""),
    ("invoke", "/kind", 5),
    ("invoke", "/body/mode", "replay"),
    ("invoke", "/body/target", _DELETE),
    ("invoke", "/body/target/phase", "compensation"),
    ("invoke", "/body/target/attempt", 0),
    ("invoke", "/body/target/fencing_generation", 11),
    ("invoke", "/body/target/fencing_generation", "18446744073709551616"),
    ("invoke", "/body/input/v/order/v", 5),
    ("invoke", "/body/input/v/order/t", "i128"),
    ("invoke", "/body/history/0/status", "skipped"),
    ("invoke", "/body/history/0/value", _DELETE),
    ("invoke", "/body/history/1/error/details", {"a": 1}),
    ("invoke", "/body/history/1/error/category", "Bad"),
    ("invoke", "/body/run_id", ""),
    ("declared", "/body/declaration/type", "sleep"),
    ("declared", "/body/declaration/retry/max_attempts", 1001),
    ("declared", "/body/declaration/retry/backoff_ms", "01"),
    ("declared", "/body/declaration/has_compensation", _DELETE),
    ("completed", "/body/value", {"t": "f64", "v": "1.0"}),
    ("completed", "/body/value", {"t": "i64", "v": "9223372036854775808"}),
    ("completed", "/body/value", {"t": "bytes", "v": "AP9="}),
    ("completed", "/body/value", {"t": "str", "v": "\ud800"}),
    ("failed", "/body/error/retryable", "no"),
    ("failed", "/body/error/cause/details", _DELETE),
    ("register", "/body/release", {"kind": "unversioned", "group": "sha256:" + "0" * 64}),
    ("register", "/body/release/kind", "pinned"),
    ("register", "/body/capacity/max_concurrent", 0),
    ("register", "/body/contract/value_codec", "msgpack"),
    ("register", "/body/capabilities", ["timers", "timers"]),
    ("register", "/body/manifest_hash", "sha256:ABC"),
    ("register", "/body/sdk", _DELETE),
    ("register_ack", "/body/version", "one"),
    ("manifest_activated", "/body/commit_order", 0),
    ("manifest_rejected", "/body/code", "bad_code"),
    ("publish_manifest", "/body/contents", "not base64!"),
    ("publish_manifest", "/body/functions/1/timeout_ms", 3600000),
    ("definition_blocked", "/body/reason", "other"),
    ("definition_blocked", "/body/first_source/line", 0),
    ("rejected_before_start", "/body/reason/code", "busy"),
    ("protocol_error", "/body/error/category", "sdk.json"),
    ("protocol_error", "/body/error/retryable", True),
    ("protocol_error", "/body/error/details", {}),
    ("conform.register", "/body/release_id", 5),
    ("conform.set_admission", "/body/open", "yes"),
    ("conform.registration_outcome", "/body/status", "ok"),
    ("conform.registration_outcome", "/body/version", _DELETE),
    ("conform.publication_outcome", "/body/workspace_generation", _DELETE),
    ("step_completed", "/body/attempt", 1.5),
    ("target_not_found", "/body/phase", "backward"),
]


@pytest.mark.parametrize(("kind", "pointer", "value"), INVALID)
def test_invalid_messages_are_refused_at_the_member(kind: str, pointer: str, value: Any) -> None:
    envelope = _set(_example(kind), pointer, value)
    violations = validate_message(envelope)
    assert violations, f"{kind} {pointer}={value!r} accepted"
    located = pointer if value is not _DELETE else pointer.rsplit("/", 1)[0]
    assert any(
        v.pointer == located or v.pointer.startswith(located + "/") or located.startswith(v.pointer)
        for v in violations
    ), violations
    if not violations[0].message.startswith("protocol."):  # else a §3 value rule refused it
        assert not schema_module._fast_check(kind)(envelope)
        assert _jsonschema_errors(envelope, kind)


def test_unknown_members_are_allowed_outside_tagged_values() -> None:
    envelope = _example("invoke")
    envelope["extra"] = 1
    envelope["body"]["extra"] = {"x": 1}
    envelope["body"]["target"]["extra"] = True
    envelope["body"]["history"][1]["error"]["extra"] = []
    assert validate_message(envelope) == []


def test_variants() -> None:
    for declaration in (
        {"type": "timer", "step_id": "c", "delay_ms": "1500"},
        {"type": "timer", "step_id": "c", "deadline_ms": "-1767225600000"},
        {
            "type": "wait",
            "step_id": "w",
            "event": "order.approved",
            "correlation": {"order": "A-1"},
            "timeout_ms": "0",
        },
        {"type": "invoke", "step_id": "i", "function_id": "f", "input": {"t": "null"}},
        {
            "type": "emit",
            "step_id": "e",
            "event": "x",
            "payload": {"t": "bytes", "v": "eyJpZCI6MX0="},
            "metadata": {},
        },
    ):
        assert validate_message(_example("declared") | {"body": {"declaration": declaration}}) == []
    for bad in (
        {"type": "timer", "step_id": "c"},
        {"type": "timer", "step_id": "c", "delay_ms": "1", "deadline_ms": "1"},
        {"type": "wait", "step_id": "w", "event": "e", "correlation": {}},
        {
            "type": "emit",
            "step_id": "e",
            "event": "x",
            "payload": {"t": "str", "v": "a"},
            "metadata": {},
        },
        {"type": "invoke", "step_id": "i", "function_id": "f", "input": {"t": "f64", "v": "01"}},
    ):
        assert validate_message(_example("declared") | {"body": {"declaration": bad}}), bad
    discover = _example("invoke")
    discover["body"]["mode"] = "discover"
    del discover["body"]["target"]
    assert validate_message(discover) == []
    outcomes = [
        {"status": "refused", "code": "unauthorized_scope"},
        {
            "status": "failed",
            "error": {
                "category": "protocol.unsupported_version",
                "message": "m",
                "retryable": False,
                "details": {"pointer": "/body/version"},
            },
        },
    ]
    for body in outcomes:
        assert validate_message(_example("conform.registration_outcome") | {"body": body}) == []
    for body in (
        {"status": "conflict", "active_generation": "sha256:" + "a" * 64},
        {"status": "rejected", "code": "undeclared_function"},
        {
            "status": "failed",
            "error": {
                "category": "protocol.malformed",
                "message": "m",
                "retryable": False,
                "details": {"pointer": "/body/application_generation"},
            },
        },
        {
            "status": "invalid",
            "error": {
                "category": "sdk.invalid_registry",
                "message": "m",
                "retryable": False,
                "details": {"code": "duplicate_function_id"},
            },
        },
    ):
        assert validate_message(_example("conform.publication_outcome") | {"body": body}) == []


def test_deep_value_rules_are_applied_after_the_schema() -> None:
    envelope = _example("invoke")
    envelope["body"]["history"][0]["value"] = {"t": "array", "v": [{"t": "f64", "v": "1.50"}]}
    assert validate_message(envelope) == [
        SchemaViolation(
            "/body/history/0/value/v/0/v",
            "'1.50' does not match "
            + repr(load_schema("common")["$defs"]["value_f64"]["properties"]["v"]["pattern"]),
        )
    ] or validate_message(envelope)[0].pointer.startswith("/body/history/0/value/v/0")
    envelope["body"]["history"][0]["value"] = {"t": "f64", "v": "1e21"}
    (violation,) = validate_message(envelope)
    assert violation.pointer.startswith("/body/history/0/value")
    deep: dict[str, Any] = {"t": "null"}
    for _ in range(64):
        deep = {"t": "array", "v": [deep]}
    completed = _example("completed")
    completed["body"]["value"] = deep
    (violation,) = validate_message(completed)
    assert violation.pointer == "/body/value" + "/v/0" * 64
    assert "protocol.limit_exceeded" in violation.message


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [("u64_string", 0, 2**64 - 1), ("i64_string", -(2**63), 2**63 - 1)],
)
def test_integer_patterns_match_the_domain_exactly(name: str, low: int, high: int) -> None:
    pattern = schema_module.strict_regex(load_schema("common")["$defs"][name]["pattern"])
    samples = {low, high, low - 1, high + 1, 0, 1, -1, 10**19, 10**18, 2**63, -(2**63) - 1}
    for digits in range(1, 21):
        samples |= {10 ** (digits - 1), 10**digits - 1, -(10 ** (digits - 1))}
    for boundary in (high, -low):
        text = str(boundary)
        for i in range(len(text)):
            for d in "0123456789":
                samples.add(int(text[:i] + d + text[i + 1 :]) * (1 if boundary == high else -1))
    for number in samples:
        assert bool(pattern.search(str(number))) == (low <= number <= high), number
    for text in ("007", "-0", "+1", "1e3", " 1", ""):
        assert not pattern.search(text)


def test_bytes_pattern_is_canonical_base64() -> None:
    value_bytes = load_schema("common")["$defs"]["value_bytes"]
    pattern = schema_module.strict_regex(value_bytes["properties"]["v"]["pattern"])

    for n in range(0, 40):
        assert pattern.search(base64.b64encode(bytes(range(n))).decode())
    for text in ("AP9=", "AB==", "A===", "AP8", "AP8=\n", "AP_-"):
        assert not pattern.search(text)


# --------------------------------------------------------------------------- fast path agreement

JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(["", "x", "1", "01", "1.0", "forward", "sha256:" + "0" * 64, "AA=="]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.dictionaries(st.sampled_from(["t", "v", "x", "type", "kind", "id"]), inner, max_size=2),
    ),
    max_leaves=5,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(doc, dict):
        for key, item in doc.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(doc, list):
        for index, item in enumerate(doc):
            found += _paths(item, (*prefix, index))
    return found


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(KINDS)), st.data())
def test_fast_path_agrees_with_jsonschema(kind: str, data: st.DataObject) -> None:
    envelope = _example(kind)
    for _ in range(data.draw(st.integers(1, 2))):
        paths = [p for p in _paths(envelope) if p]
        path = data.draw(st.sampled_from(paths))
        parent: Any = envelope
        for token in path[:-1]:
            parent = parent[token]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(JSONISH)
    fast = schema_module._fast_check(kind)(envelope)
    assert fast == (not _jsonschema_errors(envelope, kind)), json.dumps(envelope)[:500]


def test_export_schemas(tmp_path: Path) -> None:
    written = export_schemas(tmp_path / "out")
    assert len(written) == len(KINDS) + 1
    for path in written:
        assert json.loads(path.read_text()) == json.loads((SCHEMA_DIR / path.name).read_text())


def test_validate_message_is_fast() -> None:
    examples = [
        KINDS[k].example for k in ("invoke", "declared", "completed", "register", "step_failed")
    ]
    for example in examples:
        validate_message(example)
    rounds = 400
    start = time.perf_counter()
    for _ in range(rounds):
        for example in examples:
            validate_message(example)
    per_message = (time.perf_counter() - start) / (rounds * len(examples))
    assert per_message < 250e-6, f"{per_message * 1e6:.0f} us per message"
