"""A host answering a huge effect trace (issue 19 item 11): the verdict sees every event, but a
case keeps at most KEPT_FINDINGS findings (plus the first of each kind) and every report says
how many more there were, so 150,000 events cost no finding per event in memory or on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakepeer.compare import Finding
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import KEPT_FINDINGS, CaseResult, cap_findings

from .bench_run import CASES, host_command, run_bench, write_fixtures

VICTIM = CASES[1]
EVENTS = 3000


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("huge-trace-fixtures"))


def test_a_flood_of_invariant_findings_is_capped_in_every_report(
    fixtures: Path, tmp_path: Path
) -> None:
    html, markdown = tmp_path / "report.html", tmp_path / "summary.md"
    host = host_command("huge_trace_on_case.py", VICTIM, EVENTS, "started")
    run = run_bench(
        host, fixtures, tmp_path, 30.0, "--html", str(html), "--markdown", str(markdown)
    )
    assert run.status == 1, run.output
    case = run.case(VICTIM)
    assert case["raw_outcome"] == "fail" and case["invariant_broken"] is True
    assert case["reason"].startswith(f"{EVENTS:,} difference(s)"), case["reason"]
    assert len(case["diff"]) == KEPT_FINDINGS
    assert case["diff_dropped"] == EVENTS - KEPT_FINDINGS
    line = f"and {EVENTS - KEPT_FINDINGS:,} more finding(s)"
    assert line in case["diff_text"]
    assert line in html.read_text(encoding="utf-8")
    assert line in markdown.read_text(encoding="utf-8")
    assert line in run.output  # the console too
    assert {c: o for c, o in run.outcomes().items() if c != VICTIM} == {
        c: "pass" for c in CASES if c != VICTIM
    }


def test_a_huge_legal_trace_still_passes(fixtures: Path, tmp_path: Path) -> None:
    host = host_command("huge_trace_on_case.py", VICTIM, 20_000, "caught")
    run = run_bench(host, fixtures, tmp_path, 30.0)
    assert run.status == 0, run.output
    assert run.case(VICTIM)["raw_outcome"] == "pass"


def test_capping_keeps_the_first_of_every_kind_so_no_verdict_changes() -> None:
    findings = [Finding("value", f"/v/{n}", "differs") for n in range(500)]
    findings.append(Finding("invariant", "/trace/0", "broken"))
    kept, dropped = cap_findings(findings)
    assert len(kept) == KEPT_FINDINGS + 1 and kept[-1].kind == "invariant"
    assert dropped == 500 - KEPT_FINDINGS
    result = CaseResult("x", "values", "recommended", Outcome.FAIL, Outcome.FAIL, findings=kept)
    assert result.invariant_broken  # the recommended case still fails the run
