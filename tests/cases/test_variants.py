"""Derived variants (`--variants`): transformations that must not change any answer."""

from __future__ import annotations

import json

import pytest

from fakepeer.cases import Scenario
from fakepeer.cases.model import SendStep
from fakepeer.cases.variants import (
    FLEET_VARIANTS,
    FRESH_PROCESS,
    HIGHER_MINOR,
    UNKNOWN_MEMBER,
    VARIANTS,
    derive,
    fresh_process_sample,
    parse_variants,
    with_variants,
)
from fakepeer.compare import Comparer
from fakepeer.protocol.limits import MAX_REQUEST_BYTES
from fakepeer.session import Outcome, SdkSession, run_case
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk

INVOKE = {
    "run_id": "run-1",
    "function_id": "conform.program",
    "mode": "forward",
    "input": {"$plain": {"ops": [{"op": "run", "id": "ß/é😀"}]}},
    "history": [{"step_id": "a", "status": "completed", "value": {"$plain": "x"}}],
    "target": {
        "run_id": "run-1",
        "step_id": "b",
        "phase": "forward",
        "attempt": 1,
        "operation_id": "op",
        "fencing_generation": "1",
    },
}


def _fixture(body: dict = INVOKE):
    scenario = Scenario("t.v", "variant", section="x", quote="y", category="forward")
    return scenario.send("invoke", body).expect("target_not_found", {}).build()


def _sent(fixture) -> dict:
    (send,) = [step for step in fixture.steps if isinstance(step, SendStep)]
    return json.loads(send.payload)


def test_unknown_members_at_envelope_body_target_and_history_never_in_values() -> None:
    fixture = derive(_fixture(), "unknown-members")
    assert fixture is not None and fixture.id == "t.v@unknown-members"
    assert fixture.category == "@unknown-members"
    sent = _sent(fixture)
    assert UNKNOWN_MEMBER in sent
    assert UNKNOWN_MEMBER in sent["body"]
    assert UNKNOWN_MEMBER in sent["body"]["target"]
    assert all(UNKNOWN_MEMBER in entry for entry in sent["body"]["history"])
    assert UNKNOWN_MEMBER not in json.dumps(sent["body"]["input"])
    assert UNKNOWN_MEMBER not in json.dumps(sent["body"]["history"][0]["value"])


def test_reordered_and_respelled_are_the_same_document() -> None:
    original = _sent(_fixture())
    reordered = derive(_fixture(), "reordered")
    assert reordered is not None
    payload = [s for s in reordered.steps if isinstance(s, SendStep)][0].payload
    # the same document but for its own exchange id (a stray always names its one owner)
    assert json.loads(payload) == dict(original, id="t.v@reordered#1")
    assert list(json.loads(payload)) == list(reversed(list(original)))
    respelled = derive(_fixture(), "respelled")
    assert respelled is not None
    text = [s for s in respelled.steps if isinstance(s, SendStep)][0].payload.decode("ascii")
    assert json.loads(text) == dict(original, id="t.v@respelled#1")
    assert '"\\u0069\\u006e\\u0076\\u006f\\u006b\\u0065"' in text  # "invoke", letter by letter
    assert "\\uD83D\\ude00" in text and "\t" in text and "\n" in text


def test_higher_minor_version_only_replaces_1_0() -> None:
    fixture = derive(_fixture(), "minor-version")
    assert fixture is not None and _sent(fixture)["version"] == HIGHER_MINOR
    scenario = Scenario("t.w", "w", section="x", quote="y", category="envelope")
    other = scenario.send("invoke", INVOKE, version="2.0").expect("protocol_error", {}).build()
    assert derive(other, "minor-version") is None  # nothing to change: not derived


def test_a_variant_that_would_cross_a_size_limit_is_not_derived() -> None:
    big = dict(INVOKE, input={"$plain": "a" * (MAX_REQUEST_BYTES - 1000)})
    fixture = _fixture(big)
    assert derive(fixture, "respelled") is None  # six bytes a letter: over the 4 MiB bound
    assert derive(fixture, "reordered") is not None  # same size


def test_raw_frames_are_sent_as_written() -> None:
    scenario = Scenario("t.raw", "raw", section="x", quote="y", category="envelope")
    fixture = scenario.send_raw("not json").expect("protocol_error", {}).build()
    rewrites = [name for name in VARIANTS if name not in (FRESH_PROCESS, *FLEET_VARIANTS)]
    assert [derive(fixture, name) for name in rewrites] == [None] * 4
    assert derive(fixture, FRESH_PROCESS) is not None


def test_parse_variants() -> None:
    assert parse_variants("all") == VARIANTS
    assert parse_variants("none") == ()
    assert parse_variants("respelled, reordered") == ("reordered", "respelled")
    with pytest.raises(ValueError, match="unknown variant 'bogus'"):
        parse_variants("reordered,bogus")
    fixtures = [_fixture()]
    expanded = with_variants(fixtures, VARIANTS)
    one_sdk = [name for name in VARIANTS if name not in FLEET_VARIANTS]  # a pair runs those
    assert [f.id for f in expanded] == ["t.v", *(f"t.v@{name}" for name in one_sdk)]


def test_fresh_process_runs_on_the_first_fixture_of_each_category() -> None:
    def made(ident: str, category: str):
        scenario = Scenario(ident, "x", section="x", quote="y", category=category)
        return scenario.send("invoke", INVOKE).expect("completed", {}).build()

    fixtures = [
        made("b.2", "forward"),
        made("a.2", "json"),
        made("a.1", "json"),
        made("b.1", "forward"),
    ]
    assert fresh_process_sample(fixtures) == {"a.1", "b.1"}
    fresh = [f.id for f in with_variants(fixtures, [FRESH_PROCESS])[4:]]
    assert fresh == ["a.1@fresh-process", "b.1@fresh-process"]
    # a shard samples from the whole selection, so shards agree with the unsharded run
    shard = fixtures[:2]
    fresh = [f.id for f in with_variants(shard, [FRESH_PROCESS], sample_from=fixtures)[2:]]
    assert fresh == []
    assert [f.id for f in with_variants(shard, [FRESH_PROCESS])[2:]] == [
        "b.2@fresh-process",
        "a.2@fresh-process",
    ]


def test_fresh_process_variant_runs_in_a_new_process() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    plain = echo_scenario("ok").build()
    assert run_case(session, plain, timeout=5.0, comparer=Comparer()).outcome is Outcome.PASS
    fresh = derive(plain, FRESH_PROCESS)
    assert fresh is not None
    result = run_case(session, fresh, timeout=5.0, comparer=Comparer())
    assert result.outcome is Outcome.PASS and result.id == "t.ok@fresh-process"
    assert sdk.starts == 2


def test_variants_catch_what_the_fixtures_as_written_do_not(tmp_path) -> None:
    """A host that needs `version` first passes the corpus as written and fails two variants."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    host = root / "tests" / "hosts" / "order_sensitive.py"
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "fakepeer", "run", "--sdk", f"{sys.executable} {host}"]
    command += ["-k", "discovery.first-unresolved-step-declared", "--variants", "all"]
    command += ["--report-json", str(report)]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    cases = json.loads(report.read_text(encoding="utf-8"))["sdks"][0]["cases"]
    failing = {case["id"] for case in cases if case["outcome"] in ("fail", "error")}
    base = "discovery.first-unresolved-step-declared"
    assert failing == {f"{base}@reordered", f"{base}@respelled"}
    assert len(cases) == 1 + len(VARIANTS) - len(FLEET_VARIANTS)  # no fleet for one SDK


def test_respelling_stops_once_the_frame_is_surely_over_its_limit() -> None:
    """A 4 MiB request respells to about 25 MB, dropped for crossing the limit: spelling stops
    as soon as its strings alone are over it, with the same verdict (no variant)."""
    from fakepeer.cases.variants import _OverBudget, _respelled

    envelope = {"version": "1.0", "kind": "invoke", "id": "x#1", "body": {"v": "a" * 200_000}}
    whole = _respelled(envelope)
    assert len(whole) > 1_000_000
    assert _respelled(envelope, len(whole)) == whole  # within the budget: the same bytes
    with pytest.raises(_OverBudget):
        _respelled(envelope, 1_000_000)
    near = dict(INVOKE, input={"$plain": "a" * (MAX_REQUEST_BYTES - 2_000)})
    fixture = _fixture(near)
    (send,) = [step for step in fixture.steps if isinstance(step, SendStep)]
    assert len(send.payload) > 4_000_000
    assert derive(fixture, "respelled") is None  # 6 bytes a letter: far over 4 MiB
    assert derive(fixture, "reordered") is not None  # the same length: within it


def test_no_two_variants_of_a_fixture_share_a_chosen_nonce() -> None:
    """A chosen nonce is drawn when a case's steps are built: variants derived from one build
    sent the same nonce twice, and the second variant was refused as a replay (CI caught it
    over HTTP with every variant, `http.*-keeps-its-nonce`)."""
    from fakepeer.cases import load_fixtures
    from fakepeer.transport.payload import HttpPayload

    (fixture,) = [f for f in load_fixtures() if f.id == "http.stale-request-keeps-its-nonce"]
    derived = [f for f in with_variants([fixture], VARIANTS)[1:] if f.variant != FRESH_PROCESS]
    assert len(derived) >= 2
    nonces = [
        {
            step.prepared.fault.nonce
            for step in variant.steps
            if isinstance(step, SendStep) and isinstance(step.prepared, HttpPayload)
        }
        - {None}
        for variant in derived
    ]
    assert all(nonces)
    for index, mine in enumerate(nonces):
        for other in nonces[index + 1 :]:
            assert not mine & other
