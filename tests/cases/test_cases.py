"""Fixture loading: schema errors, file naming, macros, exchange ids, the Scenario API."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from fakepeer.cases import (
    ExpectStep,
    FixtureError,
    RawSendStep,
    Scenario,
    SendStep,
    Shard,
    expand,
    fixture_from_document,
    load_fixtures,
    select,
)
from fakepeer.cases.keywords import KeywordError, Keywords
from fakepeer.cases.macros import MacroError
from fakepeer.protocol.canonical import canonical_bytes
from tests.support.helpers import echo_scenario

_ECHO_NULL = {
    "run_id": "run-1",
    "function_id": "conform.echo",
    "mode": "discover",
    "input": {"t": "null"},
    "history": [],
}


def _minimal(**overrides) -> dict:
    document = {
        "id": "values.sample",
        "title": "a sample",
        "rule": {"section": "s", "quote": "q"},
        "category": "values",
        "level": "required",
        "capabilities": [],
        "steps": [
            {"send": {"kind": "invoke", "body": _ECHO_NULL}},
            {"expect": {"kind": "completed", "body": {"value": {"t": "null"}}}},
        ],
    }
    document.update(overrides)
    return document


def _problems(document: dict) -> list[str]:
    with pytest.raises(FixtureError) as caught:
        fixture_from_document(document, Path("fixtures/values/values.sample.json"))
    return [str(problem) for problem in caught.value.problems]


# ----------------------------------------------------------------------------- schema errors


def test_schema_errors_name_file_pointer_and_expectation() -> None:
    problems = _problems(_minimal(level="maybe", id="Bad Id"))
    assert any(
        p.startswith("fixtures/values/values.sample.json: /level:") and "required" in p
        for p in problems
    )
    assert any("/id:" in p and "pattern" in p for p in problems)


def test_step_with_no_known_kind_is_explained() -> None:
    problems = _problems(_minimal(steps=[{"sned": {}}]))
    assert problems == [
        "fixtures/values/values.sample.json: /steps/0: a step has exactly one of send, "
        "send_raw, send_raw_base64, expect; found sned"
    ]


def test_step_mixing_send_and_expect_is_refused() -> None:
    problems = _problems(_minimal(steps=[{"send": {"kind": "x", "body": {}}, "expect": {}}]))
    assert len(problems) == 1 and "/steps/0" in problems[0] and "expect" in problems[0]


def test_missing_members_and_unknown_members() -> None:
    document = _minimal(extra_member=1)
    del document["title"]
    problems = _problems(document)
    assert any("'title' is a required property" in p for p in problems)
    assert any("extra_member" in p for p in problems)


def test_bad_derive_name_and_vary_pointer() -> None:
    steps = [
        {"send": {"kind": "invoke", "body": {}}},
        {
            "expect": {"kind": "completed", "body": {}},
            "vary": ["body/x"],
            "derive": {"/a": "magic"},
        },
    ]
    problems = _problems(_minimal(steps=steps))
    assert any("/steps/1/vary/0" in p for p in problems)
    assert any("/steps/1/derive/~1a" in p and "magic" in p for p in problems)


def test_a_fixture_needs_an_expect() -> None:
    problems = _problems(_minimal(steps=[{"send": {"kind": "invoke", "body": {}}}]))
    assert any("at least one expect" in p for p in problems)


# ----------------------------------------------------------------------------- files


def _write(root: Path, category: str, name: str, document: dict | str) -> Path:
    path = root / category / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_load_fixtures_sorted_and_checks_names(tmp_path: Path) -> None:
    echo_scenario("b").write(tmp_path)
    echo_scenario("a").write(tmp_path)
    fixtures = load_fixtures([tmp_path])
    assert [f.id for f in fixtures] == ["t.a", "t.b"]
    assert fixtures[0].path == tmp_path / "discovery" / "t.a.json"


def test_file_name_and_folder_must_match(tmp_path: Path) -> None:
    _write(tmp_path, "discovery", "other-name.json", _minimal(category="discovery"))
    with pytest.raises(FixtureError) as caught:
        load_fixtures([tmp_path])
    text = str(caught.value)
    assert "must be named values.sample.json" in text


def test_wrong_folder_is_reported(tmp_path: Path) -> None:
    _write(tmp_path, "replay", "values.sample.json", _minimal())
    with pytest.raises(FixtureError, match="folder named 'values'"):
        load_fixtures([tmp_path])


def test_duplicate_ids_and_bad_json_are_all_reported(tmp_path: Path) -> None:
    _write(tmp_path / "one", "values", "values.sample.json", _minimal())
    _write(tmp_path / "two", "values", "values.sample.json", _minimal())
    _write(tmp_path, "values", "broken.json", "{not json")
    _write(tmp_path, "values", "dup-keys.json", '{"id": "a", "id": "b"}')
    with pytest.raises(FixtureError) as caught:
        load_fixtures([tmp_path])
    text = str(caught.value)
    assert "is also used by" in text
    assert "broken.json: (root): not valid JSON" in text
    assert "appears twice" in text
    assert len(caught.value.problems) == 3


def test_missing_path_is_a_fixture_error(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match="no such file"):
        load_fixtures([tmp_path / "nope"])


# ----------------------------------------------------------------------------- macros


def test_plain_macro_with_nested_tagged_and_bytes() -> None:
    value = expand(
        {
            "$plain": {
                "s": "x",
                "i": 7,
                "f": 1.5,
                "b": True,
                "n": None,
                "a": [1],
                "raw": {"$tagged": {"t": "u64", "v": "18446744073709551615"}},
                "by": {"$bytes": "hi"},
            }
        }
    )
    assert value == {
        "t": "object",
        "v": {
            "s": {"t": "str", "v": "x"},
            "i": {"t": "i64", "v": "7"},
            "f": {"t": "f64", "v": "1.5"},
            "b": {"t": "bool", "v": True},
            "n": {"t": "null"},
            "a": {"t": "array", "v": [{"t": "i64", "v": "1"}]},
            "raw": {"t": "u64", "v": "18446744073709551615"},
            "by": {"t": "bytes", "v": "aGk="},
        },
    }


def test_plain_floats_use_ecmascript_text() -> None:
    assert expand({"$plain": 1e21}) == {"t": "f64", "v": "1e+21"}
    assert expand({"$plain": 1e-7}) == {"t": "f64", "v": "1e-7"}
    assert expand({"$plain": -0.0}) == {"t": "f64", "v": "-0"}


def test_repeat_concat_jcs_and_sha256() -> None:
    assert expand({"$repeat": {"text": "ab", "times": 3}}) == "ababab"
    assert expand({"$concat": ["a", {"$repeat": {"text": "b", "times": 2}}, "c"]}) == "abbc"
    document = {"b": 1, "a": [True, None]}
    assert expand({"$jcs_base64": document}) == base64.b64encode(canonical_bytes(document)).decode()
    digest = hashlib.sha256(b'{"a":[true,null],"b":1}').hexdigest()
    assert expand({"$sha256_jcs": document}) == f"sha256:{digest}"


def test_macros_expand_inside_plain() -> None:
    assert expand({"$plain": {"s": {"$repeat": {"text": "z", "times": 2}}}}) == {
        "t": "object",
        "v": {"s": {"t": "str", "v": "zz"}},
    }


def test_macro_errors_have_pointers() -> None:
    with pytest.raises(MacroError) as caught:
        expand({"a": [{"$nope": 1}]})
    assert caught.value.pointer == "/a/0"
    with pytest.raises(MacroError, match="times"):
        expand({"$repeat": {"text": "a", "times": -1}})
    with pytest.raises(MacroError, match="strings"):
        expand({"$concat": ["a", 1]})


def test_macro_error_in_a_fixture_is_a_fixture_problem() -> None:
    steps = [
        {"send": {"kind": "invoke", "body": {"input": {"$plain": {"$frob": 1}}}}},
        {"expect": {"kind": "completed", "body": {}}},
    ]
    problems = _problems(_minimal(steps=steps))
    assert problems == [
        "fixtures/values/values.sample.json: /steps/0/send/body/input/$plain: "
        "unknown macro '$frob' (known: $bytes, $concat, $jcs_base64, $plain, "
        "$repeat, $sha256_jcs, $tagged)"
    ]


def test_objects_with_more_members_are_not_macros() -> None:
    assert expand({"$plain": 1, "other": 2}) == {"$plain": 1, "other": 2}


# ----------------------------------------------------------------------------- exchange ids


def test_exchange_ids_follow_requests_and_answers() -> None:
    fixture = (
        Scenario("registration.x", "t", section="s", quote="q", category="registration")
        .send("conform.register", {"scope": {}})
        .expect("register", {})
        .send("register_ack", {})
        .expect("conform.registration_outcome", {})
        .send("invoke", {}, id="custom")
        .expect("completed", {})
        .send("manifest_activated", {})
        .send("conform.reset", {})
        .expect("conform.ack", {})
        .build()
    )
    ids = [
        (type(step).__name__, getattr(step, "kind", None), step.exchange_id)
        for step in fixture.steps
    ]
    assert ids == [
        ("SendStep", None, "registration.x#1"),
        ("ExpectStep", "register", "registration.x#1"),
        ("SendStep", None, "registration.x#1"),
        ("ExpectStep", "conform.registration_outcome", "registration.x#1"),
        ("SendStep", None, "custom"),
        ("ExpectStep", "completed", "custom"),
        ("SendStep", None, "custom"),
        ("SendStep", None, "registration.x#3"),
        ("ExpectStep", "conform.ack", "registration.x#3"),
    ]
    assert fixture.steps[0].envelope["id"] == "registration.x#1"


def test_raw_sends_use_their_own_id_or_dash() -> None:
    fixture = (
        Scenario("envelope.raw", "t", section="s", quote="q", category="envelope")
        .send_raw('{"id": "mine", "kind": 5}')
        .expect_refusal("protocol.malformed", "/kind")
        .send_raw("not json")
        .expect_refusal("protocol.malformed", "")
        .send_raw_base64(b"\xff\xfe")
        .expect_refusal("protocol.malformed", "")
        .build()
    )
    raws = [step for step in fixture.steps if isinstance(step, RawSendStep)]
    expects = [step for step in fixture.steps if isinstance(step, ExpectStep)]
    assert [step.exchange_id for step in raws] == ["mine", "-", "-"]
    assert [step.exchange_id for step in expects] == ["mine", "-", "-"]
    assert raws[2].payload == b"\xff\xfe"
    assert expects[0].vary == ("/body/error/message",)
    assert expects[0].body["error"]["details"] == {"pointer": "/kind"}


def test_send_defaults_and_extra_members() -> None:
    fixture = (
        Scenario("envelope.extra", "t", section="s", quote="q", category="envelope")
        .send("invoke", {"x": 1}, version="1.7", extra={"future": True})
        .expect("completed", {})
        .build()
    )
    step = fixture.steps[0]
    assert isinstance(step, SendStep)
    assert step.envelope == {
        "version": "1.7",
        "kind": "invoke",
        "id": "envelope.extra#1",
        "body": {"x": 1},
        "future": True,
    }
    assert json.loads(step.payload) == step.envelope


def test_send_raw_with_lone_surrogate_is_refused() -> None:
    with pytest.raises(FixtureError, match="send_raw_base64"):
        Scenario("envelope.s", "t", section="s", quote="q", category="envelope").send_raw(
            "\ud800"
        ).expect("x", {}).build()


def test_send_raw_with_a_macro_is_refused_with_its_pointer() -> None:
    """send_raw goes out as written: a `$plain` in it would reach the SDK unexpanded."""
    raw = '{"version":"1.0","kind":"invoke","id":"x","body":{"input":{"$plain":1}}}'
    with pytest.raises(FixtureError, match=r"macro \$plain at /body/input.*send_raw_base64"):
        Scenario("envelope.s", "t", section="s", quote="q", category="envelope").send_raw(
            raw
        ).expect("x", {}).build()
    Scenario("envelope.s", "t", section="s", quote="q", category="envelope").send_raw_base64(
        raw.encode()
    ).expect("x", {}).build()  # the escape hatch for a deliberate one


def test_envelope_with_lone_surrogate_is_sent_escaped() -> None:
    fixture = (
        Scenario("values.s", "t", section="s", quote="q", category="values")
        .send("invoke", {"s": "\ud800"})
        .expect("x", {})
        .build()
    )
    assert b"\\ud800" in fixture.steps[0].payload


# ----------------------------------------------------------------------------- scenario


def test_scenario_writes_a_loadable_file(tmp_path: Path) -> None:
    scenario = echo_scenario("ok", capabilities=("timers",))
    path = scenario.write(tmp_path)
    assert path == tmp_path / "discovery" / "t.ok.json"
    document = json.loads(path.read_text())
    assert document["steps"][0]["send"]["body"]["input"] == {"$plain": "hi"}
    assert document["capabilities"] == ["timers"]
    (fixture,) = load_fixtures([tmp_path])
    assert fixture.capabilities == ("timers",)
    assert path.read_text().endswith("}\n")


def test_scenario_write_refuses_an_invalid_fixture(tmp_path: Path) -> None:
    with pytest.raises(FixtureError):
        Scenario("BAD", "t", section="s", quote="q", category="values").expect("x", {}).write(
            tmp_path
        )
    assert not any(tmp_path.iterdir())


# ----------------------------------------------------------------------------- selection


def _fixtures(count: int) -> list:
    return [
        echo_scenario(f"c{n:03d}", category="discovery" if n % 2 else "replay").build()
        for n in range(count)
    ]


def _k(*texts: str) -> list[Keywords]:
    return [Keywords.parse(text) for text in texts]


def test_keyword_and_category_selection() -> None:
    fixtures = _fixtures(10)
    assert [f.id for f in select(fixtures, keywords=_k("c00"))] == [f"t.c00{n}" for n in range(10)]
    assert [f.id for f in select(fixtures, keywords=_k("C001"))] == ["t.c001"]
    assert len(select(fixtures, keywords=_k("replay"))) == 5
    assert len(select(fixtures, categories=["discovery"])) == 5


@pytest.mark.parametrize(
    ("expressions", "expected"),
    [
        (["replay and not c004"], ["t.c000", "t.c002", "t.c006", "t.c008"]),
        (["c001 or c002"], ["t.c001", "t.c002"]),
        (["not (discovery or c000) and c00"], ["t.c002", "t.c004", "t.c006", "t.c008"]),
        (
            ["c00 and not discovery or c001"],
            ["t.c000", "t.c001", "t.c002", "t.c004", "t.c006", "t.c008"],
        ),
        (["not not c003"], ["t.c003"]),
        (["replay", "c004 or c005"], ["t.c004"]),  # a repeated -k narrows
        (["t.c009"], ["t.c009"]),  # names may hold dots and dashes
    ],
)
def test_keyword_expressions_as_in_pytest(expressions: list[str], expected: list[str]) -> None:
    assert [f.id for f in select(_fixtures(10), keywords=_k(*expressions))] == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("replay and", "ends too early"),
        ("(replay", "not closed"),
        ("replay)", "unexpected ')'"),
        ("and replay", "expected a name, got 'and'"),
        ("replay discovery", "unexpected 'discovery'"),
    ],
)
def test_bad_keyword_expressions_say_where(text: str, problem: str) -> None:
    with pytest.raises(KeywordError, match=re.escape(problem)):
        Keywords.parse(text)


def test_shards_partition_deterministically() -> None:
    fixtures = _fixtures(23)
    shards = [select(reversed(fixtures), shard=Shard(k, 4)) for k in range(1, 5)]
    ids = [f.id for shard in shards for f in shard]
    assert sorted(ids) == sorted(f.id for f in fixtures)
    assert len(set(ids)) == len(ids)
    assert shards == [select(fixtures, shard=Shard(k, 4)) for k in range(1, 5)]
    assert max(map(len, shards)) - min(map(len, shards)) <= 1


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3", "1/0", "1/2/3"])
def test_bad_shard_text(text: str) -> None:
    with pytest.raises(ValueError, match="--shard"):
        Shard.parse(text)


def test_raw_ids_that_are_not_valid_ids_are_answered_on_dash() -> None:
    from fakepeer.cases.exchanges import usable_id

    assert usable_id(b'{"id": ""}') == "-"
    assert usable_id(('{"id": "%s"}' % ("i" * 257)).encode()) == "-"
    assert usable_id(('{"id": "%s"}' % ("i" * 256)).encode()) == "i" * 256
    assert usable_id(b'{"id": 7}') == "-"
    assert usable_id(b"[1]") == "-"
    assert usable_id(b"\xff") == "-"
