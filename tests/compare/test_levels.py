"""Levels inside a fixture (docs/fixtures.md "Levels inside a fixture", issue 33).

A fixture's expect may list recommended parts (`recommend`: pointer pattern -> decision). A
difference only there is a warning that shows its diff; any other difference fails. Checked here
both ways at every place a level shows: the comparer, the case outcome, the closing line, the exit
status with and without --strict, known failures, every report format, merge, `fixtures validate`.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from fakepeer.cases import FixtureError, Scenario
from fakepeer.compare import compare_frame
from fakepeer.report import (
    print_run,
    run_from_document,
    to_document,
    to_html,
    to_junit,
    to_markdown,
)
from fakepeer.session import Outcome
from fakepeer.suite import RunOptions, known_failures, run_suite
from fakepeer.suite.known_failures import KnownList
from tests.support.helpers import invoke_body
from tests.support.mock_sdk import MockSdk

DECISION = "D-JSON-CONVENIENCE"


def _scenario(ident: str, value: str, recommend: dict[str, str]) -> Scenario:
    """conform.echo answers `completed` with the str "hi"; the fixture expects `value`."""
    scenario = Scenario(
        ident,
        "echo",
        section="tests",
        quote="An invocation contains the run input",
        category="values",
    )
    scenario.send("invoke", invoke_body(ident, "hi"))
    scenario.expect("completed", {"value": {"$plain": value}}, recommend=recommend)
    return scenario


def _step(scenario: Scenario):
    return next(step for step in scenario.build().steps if hasattr(step, "recommend"))


ANSWER = {"version": "1.1", "kind": "completed", "body": {"value": {"t": "str", "v": "hi"}}}


def test_a_difference_in_a_recommended_part_is_a_recommended_finding() -> None:
    step = _step(_scenario("t.rec", "nope", {"/body/value/v": DECISION}))
    (finding,) = compare_frame(step, {**ANSWER, "id": step.exchange_id})
    assert finding.recommended and finding.rule == DECISION
    assert finding.pointer == "/body/value/v"
    assert str(finding).startswith(f"[value, recommended ({DECISION})] /body/value/v:")
    assert finding.to_json()["level"] == "recommended"


def test_a_difference_outside_the_recommended_parts_is_required() -> None:
    step = _step(_scenario("t.req", "nope", {"/body/value/t": DECISION}))
    (finding,) = compare_frame(step, {**ANSWER, "id": step.exchange_id})
    assert not finding.recommended and "level" not in finding.to_json()


def test_a_recommended_pattern_covers_what_lies_below_it() -> None:
    step = _step(_scenario("t.below", "nope", {"/body/*": DECISION}))
    findings = compare_frame(step, {**ANSWER, "id": step.exchange_id})
    assert findings and all(finding.recommended for finding in findings)
    wrong_kind = {**ANSWER, "kind": "failed", "id": step.exchange_id}
    assert any(not f.recommended for f in compare_frame(step, wrong_kind))


def _run(*scenarios: Scenario, strict: bool = False, listed: tuple[str, ...] = ()):
    run = run_suite(
        [MockSdk().target("mock")], [s.build() for s in scenarios], RunOptions(strict=strict)
    )
    entries = dict.fromkeys(listed, "")
    known_failures.apply(run, known_failures.KnownFailures({"": KnownList(Path("k"), entries)}))
    return run


WARNED = ("t.warned", "nope", {"/body/value/v": DECISION})
FAILED = ("t.failed", "nope", {"/body/value/t": DECISION})


def test_a_case_whose_only_differences_are_recommended_passes_with_a_warning() -> None:
    run = _run(_scenario(*WARNED), _scenario(*FAILED))
    failed, warned = run.sdks[0].results  # in fixture-id order
    assert warned.outcome is Outcome.PASS and warned.warned and not warned.fails_run(False)
    assert "recommended parts only" in warned.reason
    assert failed.outcome is Outcome.FAIL and failed.fails_run(False)
    assert run.summary() == "1 passed, 1 failed, 1 warning"
    assert run.exit_status() == 1
    alone = _run(_scenario(*WARNED))
    assert alone.summary() == "1 passed, 0 failed, 1 warning" and alone.exit_status() == 0


def test_strict_makes_a_warning_fail_the_run_and_a_list_may_hold_it() -> None:
    strict = _run(_scenario(*WARNED), strict=True)
    (case,) = strict.sdks[0].results
    assert case.outcome is Outcome.PASS and case.fails_run(True) and strict.exit_status() == 1
    listed = _run(_scenario(*WARNED), strict=True, listed=("t.warned",))
    assert listed.sdks[0].results[0].outcome is Outcome.XFAIL and listed.exit_status() == 0
    # without --strict the warning passes the gate: a listed one is an xpass (the list shrinks)
    lax = _run(_scenario(*WARNED), listed=("t.warned",))
    assert lax.sdks[0].results[0].outcome is Outcome.XPASS and lax.exit_status() == 1


def test_every_report_shows_the_warning_with_its_part_and_decision() -> None:
    run = _run(_scenario(*WARNED))
    document = to_document(run)
    (case,) = document["sdks"][0]["cases"]
    assert case["outcome"] == "pass" and case["warned"] and not case["fails_run"]
    assert case["diff"][0]["level"] == "recommended" and case["diff"][0]["rule"] == DECISION
    assert document["summary"]["warnings"] == 1 and document["summary"]["pass"] == 1
    assert document["matrix"]["totals"][0]["warnings"] == 1
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_run(console, run)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "WARNING t.warned (values, required)" in shown
    assert f"[value, recommended ({DECISION})] /body/value/v" in shown
    markdown = to_markdown(document)
    assert "### Failing cases and warnings" in markdown and "required): warning:" in markdown
    assert markdown.rstrip().endswith("**1 passed, 0 failed, 1 warning** (exit status 0)")
    junit = ET.fromstring(ET.tostring(to_junit(document).getroot()))
    testcase = junit.find(".//testcase")
    assert testcase is not None and testcase.find("failure") is None
    assert f"recommended ({DECISION})" in (testcase.findtext("system-out") or "")
    html = to_html(document)
    assert "Warnings (1)" in html and f"recommended ({DECISION})" in html


def test_merge_and_a_report_read_back_keep_the_levels() -> None:
    run = _run(_scenario(*WARNED), strict=True)
    rebuilt = run_from_document(json.loads(json.dumps(to_document(run))))
    (case,) = rebuilt.sdks[0].results
    assert case.warned and case.findings[0].rule == DECISION
    assert rebuilt.exit_status() == 1 and rebuilt.summary() == run.summary()


def test_a_recommended_fixture_is_recommended_in_every_part_but_its_invariants() -> None:
    scenario = _scenario("t.whole", "nope", {})
    scenario.document["level"] = "recommended"
    scenario.document["rule"]["decision"] = DECISION
    (case,) = _run(scenario).sdks[0].results
    assert case.outcome is Outcome.PASS and case.warned
    assert case.findings[0].rule == DECISION


def test_validate_refuses_a_recommend_part_it_cannot_trace(tmp_path: Path) -> None:
    from fakepeer.authoring.validate import validate_paths

    unknown = _scenario("t.unknown", "hi", {"/body/value/v": "D-NO-SUCH-DECISION"})
    unknown.write(tmp_path)
    varied = _scenario("t.varied", "hi", {"/body/value/v": DECISION})
    varied.document["steps"][1]["vary"] = ["/body/value/v"]
    varied.write(tmp_path)
    problems = [str(problem) for problem in validate_paths([tmp_path])[1]]
    assert any("D-NO-SUCH-DECISION" in text and "/recommend/" in text for text in problems)
    assert any("in `vary` too" in text for text in problems)


def test_the_schema_refuses_a_recommend_value_that_is_no_decision_id() -> None:
    with pytest.raises(FixtureError):
        _scenario("t.bad", "hi", {"/body/value/v": "because"}).build()


def test_a_trace_member_may_be_a_recommended_part() -> None:
    from fakepeer.cases.model import ExpectedTrace
    from fakepeer.session.effects import check_expected_trace

    want = ExpectedTrace(({"event": "caught", "what": "error", "category": "sdk.a"},))
    got = [{"event": "caught", "what": "error", "category": "sdk.b"}]
    recommend = (("/trace/0/category", DECISION),)
    (finding,) = check_expected_trace(want, got, recommend)
    assert finding.recommended and finding.rule == DECISION
    other = [{"event": "caught", "what": "suspension", "category": "sdk.b"}]
    (required,) = check_expected_trace(want, other, recommend)
    assert not required.recommended


def test_a_json_matcher_requires_the_document_and_recommends_the_spelling() -> None:
    import base64

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    scenario = Scenario(
        "t.json", "json", section="tests", quote="An invocation contains the run input",
        category="json",
    )  # fmt: skip
    scenario.send("invoke", invoke_body("t.json", "hi"))
    expected = {"value": {"t": "bytes", "v": b64('{"a":1,"b":[2.5,true]}')}}
    scenario.expect(
        "completed",
        expected,
        recommend={"/body/value/v": DECISION},
        match={"/body/value/v": "json"},
    )
    step = _step(scenario)

    def answer(text: str) -> dict:
        body = {"value": {"t": "bytes", "v": b64(text)}}
        return {"version": "1.1", "kind": "completed", "id": step.exchange_id, "body": body}

    respelled = compare_frame(step, answer('{"b":[2.50,true],"a":1.0}'))
    assert respelled and all(finding.recommended for finding in respelled)
    for wrong in ('{"a":1,"b":[2.5,false]}', '{"a":1}', "[1]", "not json", '{"a":1,"b":[2.5,1]}'):
        assert any(not f.recommended for f in compare_frame(step, answer(wrong))), wrong
