"""A broken effect invariant fails the run whatever the case's level, and every report says so.

Issue 20: a mutant that ran a target's callback twice failed only a `recommended` fixture, through
the `target-runs-at-most-once` invariant, and the run exited 0. The level says how sure the
fixture's own expectation is; an invariant RFD 2 demands of every pass is not the fixture's.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from rich.console import Console

from fakepeer.compare import Finding
from fakepeer.report import (
    print_run,
    run_from_document,
    to_document,
    to_html,
    to_junit,
    to_markdown,
)
from fakepeer.session import Outcome
from fakepeer.session.outcomes import INVARIANT_NOTE
from fakepeer.session.results import CaseResult, RunResult, SdkRun

INVARIANT = Finding("invariant", "/trace/1", "target-runs-at-most-once: started again")
VALUE = Finding("value", "/body/value", "differs", "a", "b")


def _run(*cases: CaseResult, strict: bool = False) -> RunResult:
    return RunResult([SdkRun("sdk", ["sdk"], results=list(cases))], strict=strict)


def _case(case_id: str, level: str, *findings: Finding) -> CaseResult:
    outcome = Outcome.FAIL if findings else Outcome.PASS
    return CaseResult(case_id, "forward", level, outcome, outcome, findings=list(findings))


def test_recommended_case_with_an_invariant_finding_fails_the_run() -> None:
    broken = _case("t.twice", "recommended", VALUE, INVARIANT)
    assert broken.fails_run(strict=False) and not broken.is_warning(strict=False)
    assert broken.fails_only_by_invariant(strict=False)
    assert _run(broken).exit_status() == 1


def test_recommended_expectation_alone_still_only_warns() -> None:
    warned = _case("t.warn", "recommended", VALUE)
    assert warned.is_warning(strict=False) and not warned.fails_only_by_invariant(strict=False)
    assert _run(warned).exit_status() == 0


def test_required_case_is_not_marked_as_failing_by_invariant() -> None:
    required = _case("t.req", "required", INVARIANT)
    assert required.fails_run(strict=False) and not required.fails_only_by_invariant(False)


def test_every_report_says_the_invariant_fails_the_run() -> None:
    run = _run(
        _case("t.twice", "recommended", VALUE, INVARIANT), _case("t.warn", "recommended", VALUE)
    )
    document = json.loads(json.dumps(to_document(run)))
    cases = {case["id"]: case for case in document["sdks"][0]["cases"]}
    assert cases["t.twice"]["fails_run"] and cases["t.twice"]["fails_run_by_invariant"]
    assert cases["t.twice"]["invariant_broken"]
    assert not cases["t.warn"]["fails_run"] and not cases["t.warn"]["fails_run_by_invariant"]
    assert document["exit_status"] == 1

    junit = ET.fromstring(ET.tostring(to_junit(document).getroot()))
    kinds = {case.get("name"): case.find("failure").get("type") for case in junit.iter("testcase")}
    assert kinds["t.twice"] == "invariant" and kinds["t.warn"] == "warning"

    markdown = to_markdown(document)
    assert f"fail ({INVARIANT_NOTE})" in markdown and "warning:" in markdown

    html = to_html(document)
    assert "yes: an RFD 2 invariant is broken" in html

    out = io.StringIO()
    print_run(Console(file=out, width=200, no_color=True), run)
    text = out.getvalue()
    assert "FAIL t.twice" in text and INVARIANT_NOTE in text and "WARNING t.warn" in text


def test_merge_keeps_the_invariant_verdict() -> None:
    run = _run(_case("t.twice", "recommended", VALUE, INVARIANT))
    rebuilt = run_from_document(json.loads(json.dumps(to_document(run))))
    assert rebuilt.exit_status() == 1
