"""The runner: jobs, --max-time, known failures, strictness and exit status, several SDKs."""

from __future__ import annotations

import gc
import json

from fakepeer.cases.lifecycle import lifecycle_fixture
from fakepeer.cases.loader import repository_root
from fakepeer.session import Outcome, summary_line
from fakepeer.suite import RunOptions, run_suite
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk


def _fixtures(*run_ids: str, level: str = "required") -> list:
    return [echo_scenario(run_id, level=level).build() for run_id in run_ids]


def test_results_are_per_sdk_and_in_fixture_order() -> None:
    first, second = MockSdk(), MockSdk(capabilities=[])
    fixtures = _fixtures("ok", "echo") + [echo_scenario("caps", capabilities=("timers",)).build()]
    result = run_suite([first.target("a"), second.target("b")], fixtures, RunOptions())
    assert [sdk.label for sdk in result.sdks] == ["a", "b"]
    assert [r.id for r in result.sdks[0].results] == ["t.caps", "t.echo", "t.ok"]
    assert [r.outcome for r in result.sdks[1].results] == [Outcome.SKIP, Outcome.PASS, Outcome.PASS]
    assert result.sdks[0].capabilities == ["compensation", "timers"]
    assert result.sdks[1].capabilities == []


def test_jobs_run_every_case_once_with_at_most_one_process_per_job() -> None:
    sdk = MockSdk()
    fixtures = [echo_scenario("ok", fixture_id=f"t.case{n:02d}").build() for n in range(30)]
    seen = []
    result = run_suite(
        [sdk.target()],
        fixtures,
        RunOptions(jobs=3),
        on_result=lambda target, case: seen.append(case.id),
    )
    assert sorted(seen) == [f.id for f in fixtures]
    assert [r.id for r in result.sdks[0].results] == [f.id for f in fixtures]
    assert all(r.outcome is Outcome.PASS for r in result.sdks[0].results)
    assert 1 <= sdk.starts <= 3  # a job starts its process when it takes its first case
    assert result.sdks[0].starts == sdk.starts


def test_max_time_exceeded_marks_remaining_cases_as_errors() -> None:
    sdk = MockSdk()
    result = run_suite([sdk.target()], _fixtures("ok", "echo"), RunOptions(max_time=1e-9))
    assert all(r.outcome is Outcome.ERROR for r in result.sdks[0].results)
    assert "--max-time" in result.sdks[0].results[0].reason
    assert result.exit_status() == 1


def test_exit_status_required_failure() -> None:
    result = run_suite([MockSdk().target()], _fixtures("ok", "wrong-value"), RunOptions())
    assert result.exit_status() == 1
    assert summary_line(result.counts()) == "1 passed, 1 failed"


def test_recommended_failure_is_a_warning_unless_strict() -> None:
    fixtures = _fixtures("ok") + _fixtures("wrong-value", level="recommended")
    lenient = run_suite([MockSdk().target()], fixtures, RunOptions())
    assert lenient.exit_status() == 0
    assert lenient.sdks[0].results[1].is_warning(strict=False)
    strict = run_suite([MockSdk().target()], fixtures, RunOptions(strict=True))
    assert strict.exit_status() == 1


def test_summary_line_adds_errors_and_skips_only_when_present() -> None:
    assert summary_line({"pass": 2, "fail": 1, "error": 0, "skip": 0}) == "2 passed, 1 failed"
    assert summary_line({"pass": 2, "fail": 1, "error": 1}) == "2 passed, 1 failed, 1 error"
    assert summary_line({"pass": 2, "error": 3}) == "2 passed, 0 failed, 3 errors"
    assert (
        summary_line({"pass": 2, "xpass": 1, "skip": 3})
        == "2 passed, 0 failed, 3 skipped, 1 xpassed"
    )


def test_summary_line_counts_known_failures_and_list_errors_apart() -> None:
    tally = {"pass": 508, "xfail": 2, "xpass": 1}
    assert (
        summary_line(tally, 1)
        == "508 passed, 0 failed, 2 xfailed, 1 xpassed, 1 known-failure list error"
    )


def test_a_case_cut_short_by_max_time_says_so() -> None:
    result = run_suite(
        [MockSdk().target()], _fixtures("hang"), RunOptions(timeout=3600, max_time=1800)
    )
    (case,) = result.sdks[0].results
    assert case.outcome is Outcome.ERROR
    assert "--max-time" in case.reason


def test_run_freezes_older_objects_only_for_its_own_duration() -> None:
    sdk = MockSdk()
    frozen_during: list[int] = []
    run_suite(
        [sdk.target()],
        _fixtures("ok"),
        RunOptions(),
        on_result=lambda target, case: frozen_during.append(gc.get_freeze_count()),
    )
    assert frozen_during[0] > 0
    assert gc.get_freeze_count() == 0


def test_a_callers_own_freeze_is_left_alone() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        run_suite([MockSdk().target()], _fixtures("ok"), RunOptions())
        assert gc.get_freeze_count() == before
    finally:
        gc.unfreeze()


def test_a_lifecycle_fixture_without_a_player_is_an_internal_error_never_a_pass() -> None:
    """The model server plays lifecycle fixtures and sits above the suite, which is handed its
    player (`RunOptions.lifecycle_player`); a run given none fails loudly, never passes unplayed."""
    path = next((repository_root() / "fixtures" / "lifecycle").glob("lifecycle.*.json"))
    fixture = lifecycle_fixture(json.loads(path.read_text(encoding="utf-8")))
    result = run_suite([MockSdk().target()], [fixture], RunOptions())
    ((case,),) = [sdk.results for sdk in result.sdks]
    assert case.raw_outcome is Outcome.ERROR and case.internal
    assert "no lifecycle player was given" in case.reason
