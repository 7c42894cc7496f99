"""A mutant that runs a target's callback twice fails the run though only a recommended fixture
catches it (issue 20): invariants fail the run whatever the case's level."""

from __future__ import annotations

from fakepeer.cases import load_fixtures
from fakepeer.session.results import RunResult

from .kill_matrix import run_mutant


def test_callback_run_twice_fails_the_run_through_a_recommended_fixture() -> None:
    fixtures = [f for f in load_fixtures() if f.id.startswith("forward.target-with-")]
    assert {f.level for f in fixtures} == {"recommended"}
    run = run_mutant("target-with-history-runs-twice", fixtures)
    failing = [case for case in run.results if case.raw_outcome.value == "fail"]
    assert [case.id for case in failing] == [
        "forward.target-with-completed-history-after-replay-executed",
        "forward.target-with-completed-history-executed",
    ]
    assert all(case.fails_only_by_invariant(strict=False) for case in failing)
    assert RunResult([run]).exit_status() == 1
