"""A host whose `conform.trace` always answers no events fails every targeted case (issue 20).

Before the `targeted-answer-ran-the-callback` and `compensation-answer-ran-the-compensator`
invariants, such a host passed 27 of the corpus's targeted fixtures: only fixtures that state
their trace caught it. Now every fixture whose forward or compensate invoke is answered with the
target's outcome fails on the invariant, and every lifecycle scenario that executes a target fails
in the model server's checks.
"""

from __future__ import annotations

import sys

from fakepeer.cases import load_fixtures
from fakepeer.cases.model import ExpectStep, Fixture, SendStep
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import SdkTarget
from fakepeer.session.effects import EXECUTED_ANSWERS
from fakepeer.suite import RunOptions, run_suite
from fakepeer.transport.process import SubprocessTransport
from tests.hostile.bench_run import HOSTS

EXECUTED = frozenset().union(*EXECUTED_ANSWERS.values())


def _targeted(fixture: Fixture) -> bool:
    """Whether a forward or compensate invoke of the fixture expects the target's outcome."""
    modes: dict[str, object] = {}
    for step in fixture.steps:
        if isinstance(step, SendStep) and step.envelope.get("kind") == "invoke":
            modes[step.exchange_id] = step.envelope.get("body", {}).get("mode")
        elif isinstance(step, ExpectStep) and step.kind in EXECUTED:
            if modes.get(step.exchange_id) in ("forward", "compensate"):
                return True
    return False


def test_an_always_empty_trace_fails_every_targeted_case() -> None:
    fixtures = [fixture for fixture in load_fixtures() if _targeted(fixture)]
    assert len(fixtures) >= 50, "the corpus has dozens of targeted fixtures"
    argv = [sys.executable, str(HOSTS / "empty_trace.py")]
    target = SdkTarget("empty-trace", argv, lambda: SubprocessTransport(argv))
    run = run_suite([target], fixtures, RunOptions(timeout=5.0, jobs=1)).sdks[0]
    passed = [case.id for case in run.results if case.raw_outcome.value == "pass"]
    assert passed == []
    played = [case for case in run.results if case.raw_outcome.value != "skip"]
    assert len(played) >= 50, "cases the host's capabilities allow (HTTP ones are skipped)"
    for case in played:
        assert case.invariant_broken, (case.id, case.reason)
        assert any("answer-ran-the-c" in finding.message for finding in case.findings), (
            case.id
        )  # the new invariants, whatever else the case found


def test_lifecycle_scenarios_that_execute_a_target_fail_too() -> None:
    fixtures = [f for f in load_fixtures() if f.id.startswith("lifecycle.saga-completes")]
    argv = [sys.executable, str(HOSTS / "empty_trace.py")]
    target = SdkTarget("empty-trace", argv, lambda: SubprocessTransport(argv))
    options = RunOptions(timeout=5.0, jobs=1, lifecycle_player=play_lifecycle)
    run = run_suite([target], fixtures, options).sdks[0]
    [case] = run.results
    assert case.raw_outcome.value == "fail" and case.invariant_broken
    assert any("targeted-answer-ran-the-callback" in f.message for f in case.findings)
