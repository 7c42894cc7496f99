"""Reports a daily user reads (issue 22, item 8): the Markdown summary stays under GitHub's 1 MiB
step-summary limit, a failing HTML case is not bold red throughout, and the HTML list of cases
that fail the run shows each one's first finding, not the heading of its step."""

from __future__ import annotations

import dataclasses
import re
from importlib import resources

from fakepeer.compare import Finding
from fakepeer.report import to_document, to_markdown
from fakepeer.report.htmlreport import to_html
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun


def _failing(index: int, diff_size: int) -> CaseResult:
    finding = Finding(
        "value", "/body/value", f"expected 1, got {index}", 1, index, "step 2, expect completed"
    )
    return CaseResult(
        id=f"values.case-{index:04d}",
        category="values",
        level="required",
        outcome=Outcome.FAIL,
        raw_outcome=Outcome.FAIL,
        reason=f"case {index}: " + "x" * 40,
        findings=[dataclasses.replace(finding, message=finding.message + " " + "y" * diff_size)],
        stderr_tail="a line of stderr\n" * 30,
    )


def test_the_markdown_summary_stays_under_one_mebibyte() -> None:
    cases = [_failing(index, 2000) for index in range(1500)]  # about 5 MB of details
    run = RunResult([SdkRun("hanging-sdk", ["x"], results=cases)])
    text = to_markdown(to_document(run))
    assert len(text.encode("utf-8")) <= 400_000  # well under 1 MiB, and it says so
    assert "more failing case(s) not detailed here" in text
    assert "capped at 400 KB, well under GitHub's 1 MiB step-summary limit" in text
    assert text.rstrip().endswith("(exit status 1)")


def test_a_failing_html_case_body_is_not_bold_red() -> None:
    css = resources.files("fakepeer.report").joinpath("report.html").read_text(encoding="utf-8")
    rule = re.search(r"details\.case \{([^}]*)\}", css).group(1)
    assert "font-weight: 400" in rule and "color: inherit" in rule


def test_the_fail_list_shows_the_first_finding() -> None:
    run = RunResult([SdkRun("sdk", ["x"], results=[_failing(1, 0)])])
    page = to_html(to_document(run))
    listed = page[page.index("Cases that fail the run") :]
    listed = listed[: listed.index("</ul>")]
    assert "/body/value: expected 1, got 1" in listed


def test_lifecycle_findings_show_the_values_not_only_that_they_differ() -> None:
    """Issue 22 (8): a lifecycle failure said "the run's value differs" with neither value in
    the console, JUnit, pytest or the HTML list; the message now carries both, bounded."""
    from fakepeer.server.lifecycle import compare_report

    class _Timeline:
        def invocation_lines(self) -> list[str]:
            return ["1 discover: declared step a"]

        def invocations(self) -> list:
            return []

    class _Report:
        timeline = _Timeline()
        events: list = []

        def outcome(self) -> dict:
            big = {"t": "str", "v": "z" * 5000}
            return {"status": "completed", "value": big, "error": None, "compensation": [],
                    "skipped": []}  # fmt: skip

    expect = {
        "status": "completed",
        "value": {"t": "str", "v": "z" * 4999 + "!"},
        "invocations": ["1 discover: declared step b"],
    }
    findings = compare_report(expect, _Report())  # type: ignore[arg-type]
    messages = {finding.pointer.rsplit("/", 1)[-1]: finding.message for finding in findings}
    assert "expected" in messages["value"] and "got" in messages["value"]
    assert "!" in messages["value"] and len(messages["value"]) < 600  # bounded, at the difference
    assert (
        'expected "1 discover: declared step b", got "1 discover: declared step a"'
        in (messages["0"])
    )
