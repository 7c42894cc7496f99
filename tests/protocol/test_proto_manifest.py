"""§7.1 unversioned group, §8 manifests, validation, identities and the publication model."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakepeer.protocol.canonical import hash_document
from fakepeer.protocol.manifest import (
    REGISTRY_CODES,
    Activation,
    Conflict,
    FunctionDecl,
    ManifestStore,
    RegistryError,
    Rejection,
    TriggerBinding,
    Unauthorized,
    application_generation_id,
    build_registry,
    canonical_declarations,
    contents_bytes,
    manifest_hash,
    unversioned_group,
    validate_registry,
    workspace_content_hash,
    workspace_generation_id,
)
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.schema import validate_message

SCOPE = {"workspace_id": "ws-conform", "application_id": "app-conform"}
OTHER_APP = {"workspace_id": "ws-conform", "application_id": "app-other"}

# The §13 conformance registry, in author order.
CONFORM_FUNCTIONS = [
    {"id": "conform.saga", "timeout": "1h"},
    {"id": "conform.program"},
    {"id": "conform.echo"},
    {"id": "conform.unportable"},
]
CONFORM_TRIGGERS = [
    {"id": "conform.saga.order-retried", "event": "order.retried", "function": "conform.saga"},
    {"id": "conform.saga.order-created", "event": "order.created", "function": "conform.saga"},
    {"id": "conform.echo.requested", "event": "conform.echo.requested", "function": "conform.echo"},
]


def test_conformance_registry_contents() -> None:
    functions, triggers = build_registry(CONFORM_FUNCTIONS, CONFORM_TRIGGERS)
    assert [f.id for f in functions] == [
        "conform.echo",
        "conform.program",
        "conform.saga",
        "conform.unportable",
    ]
    assert functions[2] == FunctionDecl("conform.saga", 3_600_000)
    assert [t.id for t in triggers] == [
        "conform.echo.requested",
        "conform.saga.order-created",
        "conform.saga.order-retried",
    ]
    contents = contents_bytes(functions, triggers)
    assert contents == (
        b'{"format":"ryusen.manifest-contents/1","functions":[{"id":"conform.echo"},'
        b'{"id":"conform.program"},{"id":"conform.saga","timeout_ms":"3600000"},'
        b'{"id":"conform.unportable"}],"triggers":[{"event":"conform.echo.requested",'
        b'"function":"conform.echo","id":"conform.echo.requested"},{"event":"order.created",'
        b'"function":"conform.saga","id":"conform.saga.order-created"},{"event":"order.retried",'
        b'"function":"conform.saga","id":"conform.saga.order-retried"}]}'
    )
    assert manifest_hash(contents) == "sha256:" + hashlib.sha256(contents).hexdigest()
    # author order never matters
    assert contents_bytes(list(reversed(functions)), list(reversed(triggers))) == contents


def test_sort_is_by_code_point_not_utf16() -> None:
    # By code point U+FF61 < U+10000; in UTF-16 the lead surrogate 0xD800 sorts first.
    functions, _ = canonical_declarations([FunctionDecl("\U00010000"), FunctionDecl("\uff61")], [])
    assert [f.id for f in functions] == ["\uff61", "\U00010000"]
    _, triggers = canonical_declarations(
        [],
        [
            TriggerBinding("t", "b", "f"),
            TriggerBinding("t", "a", "g"),
            TriggerBinding("s", "z", "z"),
        ],
    )
    assert triggers == (
        TriggerBinding("s", "z", "z"),
        TriggerBinding("t", "a", "g"),
        TriggerBinding("t", "b", "f"),
    )


def test_publish_example_contents_are_the_canonical_bytes() -> None:
    body = KINDS["publish_manifest"].example["body"]
    functions, triggers = build_registry(body["functions"], body["triggers"])
    assert base64.b64decode(body["contents"]) == contents_bytes(functions, triggers)


@pytest.mark.parametrize(
    ("functions", "triggers", "code"),
    [
        ([{"id": ""}], [], "empty_function_id"),
        ([{"id": "a"}, {"id": "a"}], [], "duplicate_function_id"),
        ([{"id": "a", "timeout": "5"}], [], "invalid_timeout"),
        ([{"id": "a", "timeout": "9223372036854775808ms"}], [], "invalid_timeout"),
        ([{"id": "a", "timeout_ms": "01"}], [], "invalid_timeout"),
        ([{"id": "a", "timeout_ms": "18446744073709551616"}], [], "invalid_timeout"),
        ([{"id": "a", "timeout_ms": 5}], [], "invalid_timeout"),
        ([FunctionDecl("a", -1)], [], "invalid_timeout"),
        ([{"id": "a"}], [{"id": "", "event": "e", "function": "a"}], "empty_trigger_id"),
        ([{"id": "a"}], [{"id": "t", "event": "", "function": "a"}], "empty_event_name"),
        ([{"id": "a"}], [{"id": "t", "event": "e", "function": "b"}], "undeclared_function"),
        # §8.2 order: the earlier rule is reported
        ([{"id": "a"}, {"id": "a"}, {"id": ""}], [], "empty_function_id"),
        ([{"id": "a", "timeout": "x"}, {"id": "a"}], [], "duplicate_function_id"),
        (
            [{"id": "a", "timeout": "x"}],
            [{"id": "", "event": "", "function": "z"}],
            "invalid_timeout",
        ),
        ([{"id": "a"}], [{"id": "t", "event": "", "function": "z"}], "empty_event_name"),
    ],
)
def test_registry_validation_codes_in_order(
    functions: list[Any], triggers: list[Any], code: str
) -> None:
    assert validate_registry(functions, triggers) == code
    with pytest.raises(RegistryError) as info:
        build_registry(functions, triggers)
    assert info.value.code == code


def test_timeout_policy_maximum_is_server_only_and_last() -> None:
    functions = [{"id": "a", "timeout_ms": "3600001"}]
    assert validate_registry(functions, []) is None
    assert (
        validate_registry(functions, [], policy_max_timeout_ms=3_600_000) == "timeout_above_maximum"
    )
    assert validate_registry([{"id": "a", "timeout_ms": "3600000"}], [], 3_600_000) is None
    bad_trigger = [{"id": "t", "event": "e", "function": "z"}]
    assert validate_registry(functions, bad_trigger, 1) == "undeclared_function"
    assert REGISTRY_CODES[-1] == "timeout_above_maximum"


def test_timeouts_convert_by_section_6() -> None:
    functions, _ = build_registry(
        [{"id": "a", "timeout": "1ns"}, {"id": "b", "timeout": "1.5s"}], []
    )
    assert functions == (FunctionDecl("a", 1), FunctionDecl("b", 1500))
    assert FunctionDecl("a").to_json() == {"id": "a"}
    assert FunctionDecl("a", 1500).to_json() == {"id": "a", "timeout_ms": "1500"}


def test_unversioned_group() -> None:
    contract = {"protocol_major": 1, "value_codec": "ryusen.tagged/1", "capabilities": ["timers"]}
    functions = ["a", "b"]
    digest = "sha256:" + "1" * 64
    group = unversioned_group(contract, functions, digest)
    expected = hash_document(
        {"contract": contract, "functions": functions, "manifest_hash": digest}
    )
    assert group == "unversioned:" + expected
    assert group.startswith("unversioned:sha256:") and len(group) == len("unversioned:sha256:") + 64
    assert unversioned_group(contract, ["a"], digest) != group


def test_identities() -> None:
    functions, triggers = build_registry([{"id": "a"}], [])
    contents = contents_bytes(functions, triggers)
    first = application_generation_id(SCOPE, None, contents, functions, triggers)
    assert first == hash_document(
        {
            "scope": SCOPE,
            "expected_parent": None,
            "contents": base64.b64encode(contents).decode(),
            "functions": [{"id": "a"}],
            "triggers": [],
        }
    )
    assert application_generation_id(SCOPE, first, contents, functions, triggers) != first
    assert application_generation_id(OTHER_APP, None, contents, functions, triggers) != first
    apps = {"app-b": "sha256:" + "b" * 64, "app-a": "sha256:" + "a" * 64}
    assert workspace_content_hash(apps) == hash_document(apps)
    content = workspace_content_hash(apps)
    assert workspace_generation_id("ws", None, content) == hash_document(
        {"workspace_id": "ws", "expected_parent": None, "content_hash": content}
    )


# --------------------------------------------------------------------------- the store


def publication(
    scope: dict[str, str] = SCOPE,
    parent: str | None = None,
    functions: list[dict[str, str]] | None = None,
    triggers: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    functions = [{"id": "a"}] if functions is None else functions
    triggers = [] if triggers is None else triggers
    decls, bindings = build_registry(functions, triggers)
    contents = base64.b64encode(contents_bytes(decls, bindings)).decode()
    return {
        "scope": scope,
        "expected_parent": parent,
        "functions": functions,
        "triggers": triggers,
        "contents": contents,
    }


def test_first_publication_activates() -> None:
    store = ManifestStore()
    result = store.publish(SCOPE, publication())
    assert isinstance(result, Activation)
    assert result.commit_order == 1
    head = store.workspace_head("ws-conform")
    assert head is not None
    assert head.applications == {"app-conform": result.application_generation}
    assert head.expected_parent is None
    assert head.content_hash == hash_document({"app-conform": result.application_generation})
    assert head.generation_id == result.workspace_generation
    assert store.active_generation(SCOPE) == result.application_generation
    envelope = {"version": "1.0", "kind": result.kind, "id": "x", "body": result.to_body()}
    assert validate_message(envelope) == []


def test_identical_publication_returns_the_original_activation() -> None:
    store = ManifestStore()
    first = store.publish(SCOPE, publication())
    store.publish(OTHER_APP, publication(OTHER_APP))
    again = store.publish(SCOPE, publication())
    assert again == first
    assert len(store.workspace_generations("ws-conform")) == 2
    # author order of declarations does not make a different publication
    reordered = publication(functions=[{"id": "b"}, {"id": "a"}])
    second = store.publish(SCOPE, dict(reordered, expected_parent=first.application_generation))  # type: ignore[union-attr]
    same = dict(reordered, functions=[{"id": "a"}, {"id": "b"}])
    assert store.publish(SCOPE, dict(same, expected_parent=first.application_generation)) == second  # type: ignore[union-attr]


def test_stale_parent_is_a_visible_conflict_without_mutation() -> None:
    store = ManifestStore()
    first = store.publish(SCOPE, publication())
    assert isinstance(first, Activation)
    second = store.publish(
        SCOPE, publication(parent=first.application_generation, functions=[{"id": "b"}])
    )
    assert isinstance(second, Activation)
    before = store.workspace_generations("ws-conform")
    stale = store.publish(
        SCOPE, publication(parent=first.application_generation, functions=[{"id": "c"}])
    )
    assert stale == Conflict(second.application_generation, stale.message)  # type: ignore[union-attr]
    never = store.publish(SCOPE, publication(functions=[{"id": "d"}]))  # null parent, app has one
    assert isinstance(never, Conflict)
    assert store.workspace_generations("ws-conform") == before
    assert store.active_generation(SCOPE) == second.application_generation
    fresh = store.publish(OTHER_APP, publication(OTHER_APP, parent="sha256:" + "0" * 64))
    assert fresh == Conflict(None, fresh.message)  # type: ignore[union-attr]
    envelope = {"version": "1.0", "kind": "manifest_conflict", "id": "x", "body": stale.to_body()}  # type: ignore[union-attr]
    assert validate_message(envelope) == []


def test_same_content_with_a_new_parent_is_a_new_generation() -> None:
    store = ManifestStore()
    first = store.publish(SCOPE, publication())
    assert isinstance(first, Activation)
    again = store.publish(SCOPE, publication(parent=first.application_generation))
    assert isinstance(again, Activation)
    assert again.application_generation != first.application_generation
    assert again.commit_order == 2
    generations = store.application_generations(SCOPE)
    assert [g.generation_id for g in generations] == [
        first.application_generation,
        again.application_generation,
    ]
    assert generations[0].expected_parent is None
    assert generations[1].expected_parent == first.application_generation


def test_validation_rejects_before_anything_changes() -> None:
    store = ManifestStore(policy_max_timeout_ms=1000)
    bad = publication(triggers=[])
    bad["triggers"] = [{"id": "t", "event": "e", "function": "zz"}]
    assert store.publish(SCOPE, bad) == Rejection(
        "undeclared_function", "registry violates undeclared_function"
    )
    over = publication(functions=[{"id": "a", "timeout": "2s"}])
    assert over["functions"] == [{"id": "a", "timeout": "2s"}]
    over["functions"] = [{"id": "a", "timeout_ms": "2000"}]
    result = store.publish(SCOPE, over)
    assert isinstance(result, Rejection) and result.code == "timeout_above_maximum"
    assert store.workspace_head("ws-conform") is None
    assert store.application_generations(SCOPE) == []
    envelope = {"version": "1.0", "kind": result.kind, "id": "x", "body": result.to_body()}
    assert validate_message(envelope) == []


def test_authorization_comes_before_validation_and_lookup() -> None:
    store = ManifestStore()
    first = store.publish(SCOPE, publication())
    bad = publication()
    bad["functions"] = [{"id": ""}]
    assert isinstance(store.publish(OTHER_APP, bad), Unauthorized)
    assert isinstance(store.publish(OTHER_APP, publication()), Unauthorized)  # even a repeat
    assert isinstance(store.publish({"workspace_id": "ws-conform"}, publication()), Unauthorized)
    empty = publication()
    empty["scope"] = {}
    assert isinstance(store.publish({}, empty), Unauthorized)
    assert store.workspace_generations("ws-conform")[-1].commit_order == first.commit_order  # type: ignore[union-attr]


def test_workspace_generations_chain_and_keep_history() -> None:
    store = ManifestStore()
    a = store.publish(SCOPE, publication())
    b = store.publish(OTHER_APP, publication(OTHER_APP))
    assert isinstance(a, Activation) and isinstance(b, Activation)
    first, second = store.workspace_generations("ws-conform")
    assert second.expected_parent == first.generation_id
    assert second.applications == {
        "app-conform": a.application_generation,
        "app-other": b.application_generation,
    }
    assert first.applications == {"app-conform": a.application_generation}  # old stays readable
    assert (first.commit_order, second.commit_order) == (1, 2)
    assert second.to_json()["applications"] == dict(second.applications)
    other_ws = store.publish(
        {"workspace_id": "ws-2", "application_id": "app-conform"},
        publication({"workspace_id": "ws-2", "application_id": "app-conform"}),
    )
    assert isinstance(other_ws, Activation)
    assert other_ws.commit_order == 3
    assert other_ws.application_generation != a.application_generation  # scope is in the identity
    assert store.workspace_head("ws-2").expected_parent is None  # type: ignore[union-attr]


def test_workspace_head_conflict_is_retried_internally() -> None:
    store = ManifestStore()
    base = store.publish(SCOPE, publication())
    assert isinstance(base, Activation)
    racing: list[Any] = []

    def concurrent(s: ManifestStore) -> None:
        s.before_workspace_cas = None  # land exactly one concurrent publication
        racing.append(s.publish(OTHER_APP, publication(OTHER_APP)))

    store.before_workspace_cas = concurrent
    result = store.publish(
        SCOPE, publication(parent=base.application_generation, functions=[{"id": "b"}])
    )
    assert isinstance(result, Activation)
    assert store.cas_retries == 1
    (other,) = racing
    assert isinstance(other, Activation)
    assert (other.commit_order, result.commit_order) == (2, 3)
    generations = store.workspace_generations("ws-conform")
    assert [g.commit_order for g in generations] == [1, 2, 3]
    assert generations[2].expected_parent == generations[1].generation_id
    assert generations[2].applications == {
        "app-conform": result.application_generation,
        "app-other": other.application_generation,
    }


def test_same_application_race_is_a_conflict_not_a_retry() -> None:
    store = ManifestStore()
    base = store.publish(SCOPE, publication())
    assert isinstance(base, Activation)
    racing: list[Any] = []

    def concurrent(s: ManifestStore) -> None:
        s.before_workspace_cas = None
        pub = publication(parent=base.application_generation, functions=[{"id": "x"}])
        racing.append(s.publish(SCOPE, pub))

    store.before_workspace_cas = concurrent
    result = store.publish(
        SCOPE, publication(parent=base.application_generation, functions=[{"id": "y"}])
    )
    (winner,) = racing
    assert isinstance(winner, Activation)
    assert result == Conflict(winner.application_generation, result.message)  # type: ignore[union-attr]
    assert store.cas_retries == 0
    assert len(store.workspace_generations("ws-conform")) == 2


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=5, unique=True),
    st.randoms(use_true_random=False),
)
def test_contents_are_independent_of_author_order(ids: list[str], rng: Any) -> None:
    functions = [FunctionDecl(i) for i in ids]
    triggers = [TriggerBinding(f"t{i}", "e", i) for i in ids]
    contents = contents_bytes(functions, triggers)
    rng.shuffle(functions)
    rng.shuffle(triggers)
    assert contents_bytes(functions, triggers) == contents
