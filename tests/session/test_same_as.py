"""`same_as` (docs/fixtures.md): a value compared with a value of an earlier answer of the case,
for what only the SDK knows (definition_blocked's source metadata, D-BLOCKER-SOURCES)."""

from __future__ import annotations

import pytest

from fakepeer.cases import FixtureError, Scenario
from fakepeer.compare import Comparer
from fakepeer.session import Outcome, SdkSession, run_case
from tests.support.helpers import invoke_body
from tests.support.mock_sdk import MockSdk

SAME = {"/body/value": {"step": 2, "pointer": "/body/value"}}


def _scenario(first: object, second: object, same: dict = SAME) -> Scenario:
    """Two echo invokes (the mock answers each with its input), the second's value held to the
    first's."""
    scenario = Scenario("t.same", "same as", section="x", quote="y", category="duplicates")
    scenario.send("invoke", invoke_body("r", first)).expect("completed", {}, vary=["/body/value"])
    scenario.send("invoke", invoke_body("r", second)).expect("completed", {}, vary=["/body/value"])
    scenario.document["steps"][-1]["same_as"] = same
    return scenario


def _play(scenario: Scenario):  # noqa: ANN202 - a CaseResult
    return run_case(
        SdkSession(MockSdk().factory), scenario.build(), timeout=5.0, comparer=Comparer()
    )


def test_the_same_value_passes_another_fails_naming_the_earlier_answer() -> None:
    assert _play(_scenario({"file": "p.py", "line": 3}, {"file": "p.py", "line": 3})).outcome is (
        Outcome.PASS
    )
    result = _play(_scenario({"file": "p.py", "line": 3}, {"file": "p.py", "line": 9}))
    assert result.outcome is Outcome.FAIL
    (finding,) = result.findings
    assert finding.kind == "derive" and finding.pointer == "/body/value"
    assert "the answer read in step 2" in finding.message


def test_a_member_absent_on_either_side_is_not_compared() -> None:
    absent = {"/body/value/line": {"step": 2, "pointer": "/body/value/line"}}
    assert _play(_scenario({"file": "p.py"}, {"file": "p.py", "line": 9}, absent)).outcome is (
        Outcome.PASS
    )


def test_same_as_names_an_earlier_expect_and_a_varied_pointer() -> None:
    with pytest.raises(FixtureError, match="step 3 is no earlier expect step"):
        _scenario(1, 1, {"/body/value": {"step": 3, "pointer": "/body/value"}}).build()
    scenario = _scenario(1, 1)
    scenario.document["steps"][-1]["vary"] = []
    with pytest.raises(FixtureError, match="vary it too"):
        scenario.build()
