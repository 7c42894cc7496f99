"""A stray frame is blamed on the case whose id it carries, and the case it interrupted replays.

Why: a late copy of case A's answer is read by whichever exchange comes next; the id says it is
A's, so A (which had passed) becomes the error and the innocent case B runs again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakepeer.compare import Comparer
from fakepeer.session import Outcome, SdkSession, run_case
from fakepeer.session.attribution import owner, sent_ids
from fakepeer.session.wire import WireRecord
from fakepeer.suite import RunOptions, known_failures, run_suite
from fakepeer.suite.known_failures import KnownFailures, KnownList
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk


def _run(session: SdkSession, run_id: str, fixture_id: str):
    fixture = echo_scenario(run_id, fixture_id=fixture_id).build()
    return run_case(session, fixture, timeout=5.0, comparer=Comparer())


@pytest.mark.parametrize("copy_at", ["reset", "invoke", "after"])
def test_a_late_copy_makes_the_earlier_case_the_error_and_the_next_one_replays(
    copy_at: str,
) -> None:
    sdk = MockSdk()
    sdk.copy_at = copy_at
    session = SdkSession(sdk.factory)
    first = _run(session, "late-copy", "t.a")
    assert first.outcome is Outcome.PASS
    second = _run(session, "ok", "t.b")
    assert second.outcome is Outcome.PASS, second.reason
    assert first.outcome is Outcome.ERROR and first.raw_outcome is Outcome.ERROR
    assert first.reason == (
        "answered twice: a second answer with id 't.a#1' (kind 'completed') arrived during "
        "case 't.b'"
    )
    assert first.wire[-1].direction == "received"
    assert first.wire[-1].to_json()["json"]["id"] == "t.a#1"
    assert sdk.starts == 2, "the interrupted case replays on a fresh process"
    assert second.wire[0].to_json()["json"]["kind"] == "conform.register"


def test_the_replayed_case_keeps_its_own_outcome() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    _run(session, "late-copy", "t.a")
    second = _run(session, "wrong-value", "t.b")
    assert second.outcome is Outcome.FAIL
    assert "difference" in second.reason


def test_a_known_failure_that_answers_twice_is_an_xfail() -> None:
    fixtures = [
        echo_scenario(r, fixture_id=i).build() for r, i in (("late-copy", "t.a"), ("ok", "t.b"))
    ]
    run = run_suite([MockSdk().target()], fixtures, RunOptions())
    first = run.sdks[0].results[0]
    assert (first.outcome, first.raw_outcome) == (Outcome.ERROR, Outcome.ERROR)
    known_failures.apply(run, KnownFailures({"": KnownList(Path("k"), {"t.a": ""})}))
    assert (first.outcome, first.raw_outcome) == (Outcome.XFAIL, Outcome.ERROR)


def test_an_earlier_failure_keeps_its_diff_and_reason_after_the_new_one() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    first = _run(session, "wrong-value", "t.a")
    assert first.outcome is Outcome.FAIL
    transport = session.transport
    assert transport is not None
    copy = b'{"version":"1.0","kind":"completed","id":"t.a#1","body":{"value":{"t":"null"}}}'
    transport._queue.append(copy)  # type: ignore[attr-defined]
    assert _run(session, "ok", "t.b").outcome is Outcome.PASS
    assert first.outcome is Outcome.ERROR
    assert first.reason.startswith("answered twice: ")
    assert first.reason.endswith("; before that: 1 difference(s): value")
    assert first.findings, "the diff of the failure stays"


@pytest.mark.parametrize("stray_id", ["other#1", "-", "t.b#1"])
def test_a_stray_frame_that_names_no_earlier_case_is_the_current_cases_error(
    stray_id: str,
) -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    first = _run(session, "ok", "t.a")
    transport = session.transport
    assert transport is not None
    stray = b'{"version":"1.0","kind":"completed","id":"%s","body":{}}' % stray_id.encode()
    transport._queue.append(stray)  # type: ignore[attr-defined]
    second = _run(session, "ok", "t.b")
    assert second.outcome is Outcome.ERROR
    assert repr(stray_id) in second.reason and "answered out of turn" in second.reason
    assert first.outcome is Outcome.PASS
    assert sdk.starts == 1, "no replay: the current case is the one to blame"


def test_an_extra_copy_within_the_case_is_still_that_cases_error() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    transport = session.ensure_started(None)
    answer = transport.handler  # type: ignore[attr-defined]

    def twice(payload: bytes) -> list[bytes]:
        return list(answer(payload)) * (2 if b'"invoke"' in payload else 1)

    transport.handler = twice  # type: ignore[attr-defined]
    result = _run(session, "ok", "t.a")
    assert result.outcome is Outcome.ERROR
    assert "an extra 'completed' frame with id 't.a#1'" in result.reason
    assert sdk.starts == 1


def test_an_id_claimed_by_several_earlier_cases_blames_none_of_them() -> None:
    served = [_run(SdkSession(MockSdk().factory), "ok", "t.a") for _ in range(2)]
    current = _run(SdkSession(MockSdk().factory), "ok", "t.b").exchange_ids
    both, one = SdkSession(MockSdk().factory), SdkSession(MockSdk().factory)
    for result in served:
        both.note_served(result)
    one.note_served(served[0])
    assert owner(both, "t.a#1", current) is None
    assert owner(one, "t.a#1", current) is served[0]
    assert owner(one, "t.b#1", current) is None, "the current case's own id"
    assert owner(one, 7, current) is None


def test_ids_are_read_from_the_frames_a_case_sent() -> None:
    result = _run(SdkSession(MockSdk().factory), "ok", "t.a")
    ids = sent_ids(result.wire)
    traces = {ident for ident in ids if ident.startswith("bench.effects#")}  # §12.4 requests
    assert ids - traces == {"bench.register#1", "bench.reset#2", "t.a#1"}
    assert len(traces) == 1
    raw = WireRecord("sent", 0.0, b"\xff not json")
    assert sent_ids([raw, WireRecord("sent", 0.0, b'{"id": 3}')]) == set()


def test_only_cases_of_the_current_process_can_be_blamed() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    _run(session, "ok", "t.a")
    assert [case.id for case in session.served] == ["t.a"]
    _run(session, "crash", "t.crash")
    _run(session, "ok", "t.b")
    assert [case.id for case in session.served] == ["t.b"]


def test_the_runner_reports_the_amended_record() -> None:
    sdk = MockSdk()
    fixtures = [
        echo_scenario("ok", fixture_id="t.1").build(),
        echo_scenario("late-copy", fixture_id="t.2").build(),
        echo_scenario("ok", fixture_id="t.3").build(),
        echo_scenario("ok", fixture_id="t.4").build(),
    ]
    result = run_suite([sdk.target()], fixtures, RunOptions())
    outcomes = {r.id: r.outcome for r in result.sdks[0].results}
    assert outcomes == {
        "t.1": Outcome.PASS,
        "t.2": Outcome.ERROR,
        "t.3": Outcome.PASS,
        "t.4": Outcome.PASS,
    }
    assert result.sdks[0].starts == 2
    assert result.exit_status() == 1
