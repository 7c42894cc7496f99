"""An answer identical to a checked expectation is taken without decoding or walking it again.

Why: decoding, validating and comparing a passing answer was most of the bench's own cost per
case (issue 24). A fixture file's expectations pass the kind's schema and the §3 value rules when
it loads (`ExpectStep.checked`), so an answer equal to one, types included, is valid and equal,
and an answer that is one byte for byte in the usual spelling decodes to exactly it. Everything
else, however close, goes the whole way and keeps its verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import rfc8785

from fakepeer.cases import Scenario, load_fixtures
from fakepeer.cases.model import ExpectStep
from fakepeer.cases.variants import derive
from fakepeer.compare import Comparer
from fakepeer.protocol import fastpath
from fakepeer.session.sdk import SessionError, decode

VALUE = {"t": "object", "v": {"n": {"t": "i64", "v": "7"}, "s": {"t": "str", "v": "é"}}}


def _echo(expect: dict, fixture_id: str = "values.checked", **step: object) -> Scenario:
    """An echo invoke in discovery and the answer `expect`."""
    scenario = Scenario(fixture_id, "t", section="s", quote="q", category="values")
    scenario.send(
        "invoke",
        {"run_id": "r", "function_id": "conform.echo", "mode": "discover", "input": VALUE,
         "history": []},
    )  # fmt: skip
    return scenario.expect("completed", expect, **step)


def _fixture(tmp_path: Path, expect: dict, **step: object):
    path = _echo(expect, **step).write(tmp_path / "fixtures")
    return load_fixtures([path])[0]


def _expect(fixture) -> ExpectStep:
    return next(step for step in fixture.steps if isinstance(step, ExpectStep))


def _spelled(step: ExpectStep, version: str = "1.0", **extra: object) -> bytes:
    envelope = {"version": version, "kind": step.kind, "id": step.exchange_id, "body": step.body}
    envelope.update(extra)
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_loaded_expectation_is_checked_unless_something_in_it_varies(tmp_path: Path) -> None:
    assert _expect(_fixture(tmp_path / "a", {"value": VALUE})).checked
    varied = _fixture(tmp_path / "b", {"value": VALUE}, vary=["/body/value/v/n/v"])
    assert not _expect(varied).checked


def test_only_an_expectation_that_passes_its_checks_is_checked() -> None:
    not_an_i64 = {"value": {"t": "i64", "v": "1.5"}}
    assert not _expect(_echo(not_an_i64, "values.built").build()).checked
    assert _expect(_echo({"value": VALUE}, "values.built").build()).checked


def test_a_variant_that_renames_an_id_in_the_body_is_checked_no_more(tmp_path: Path) -> None:
    fixture = _fixture(tmp_path, {"value": {"t": "str", "v": "values.checked#1"}})
    assert _expect(fixture).checked
    variant = derive(fixture, "unknown-members")
    assert variant is not None
    step = _expect(variant)
    assert step.body["value"]["v"] == "values.checked@unknown-members#1"
    assert not step.checked


def test_the_expected_answer_byte_for_byte_is_taken_as_it_decodes(tmp_path: Path) -> None:
    step = _expect(_fixture(tmp_path, {"value": VALUE}))
    for version in ("1.0", "1.1"):
        payload = _spelled(step, version)
        assert Comparer().spelled_as_expected(step, payload) == decode(payload)
        canonical = rfc8785.dumps({"version": version, "kind": step.kind, "id": step.exchange_id,
                                   "body": step.body})  # fmt: skip
        assert canonical.startswith(b'{"body":')
        assert Comparer().spelled_as_expected(step, canonical) == decode(canonical)
    with fastpath.disabled():
        assert Comparer().spelled_as_expected(step, _spelled(step)) is None


def test_near_misses_go_the_whole_way_and_keep_their_verdict(tmp_path: Path) -> None:
    step = _expect(_fixture(tmp_path, {"value": VALUE}))
    comparer = Comparer()
    good = _spelled(step)
    repeated = good[:-1] + b',"body":' + json.dumps(step.body).encode() + b"}"
    near = {
        "a repeated member": repeated,
        "a version no bench speaks": _spelled(step, "9.0"),
        "a version spelled wrong": _spelled(step, "01.0"),
        "a space": good[:-1] + b" }",
        "another id": good.replace(step.exchange_id.encode(), b"values.checked#2"),
        "ASCII escapes": json.dumps(json.loads(good), separators=(",", ":")).encode(),
        "sorted, then a member more": rfc8785.dumps({**json.loads(good), "x": 1}),
        "sorted, a repeated member": b'{"body":{},' + rfc8785.dumps(json.loads(good))[1:],
        "sorted, another version": rfc8785.dumps({**json.loads(good), "version": "2.0"}),
    }
    for name, payload in near.items():
        assert comparer.spelled_as_expected(step, payload) is None, name
    try:
        decode(repeated)
    except SessionError as exc:
        assert "appears twice" in exc.reason
    else:
        raise AssertionError("a repeated member decodes")
    bad_version = comparer.compare(step, decode(_spelled(step, "01.0")))
    assert [finding.kind for finding in bad_version] == ["version", "schema"], bad_version
    assert comparer.compare(step, decode(_spelled(step, "1.0", extra=1))) == []


def test_an_equal_answer_with_other_json_types_is_walked(tmp_path: Path) -> None:
    """`true` equals `1` in Python: an answer equal only that way is validated and compared."""
    step = _expect(_fixture(tmp_path, {"value": VALUE}))
    envelope = decode(_spelled(step))
    envelope["body"] = {**envelope["body"], "extra": 1}
    assert Comparer().compare(step, envelope)  # a member the expectation lacks: a difference
    flagged = _expect(_fixture(tmp_path / "b", {"value": {"t": "bool", "v": True}}))
    answer = {"version": "1.0", "kind": "completed", "id": flagged.exchange_id,
              "body": {"value": {"t": "bool", "v": 1}}}  # fmt: skip
    found = Comparer().compare(flagged, answer)
    assert {finding.kind for finding in found} >= {"schema"}, found
