"""docs/coverage.md stays true: its bottom row and its list of uncovered sentences are what
`ryusen-conform coverage` computes for today's corpus (the earlier rows are history)."""

from __future__ import annotations

import re
from pathlib import Path

from fakepeer.authoring.coverage import coverage_for

DOC = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def test_bottom_row_is_todays_coverage() -> None:
    report = coverage_for()
    bold = r"\*\*(\d+)\*\*"
    pattern = rf"\| \+ the model server's tests[^|]*\| {bold} \| {bold} \| {bold} \|"
    row = re.search(pattern, DOC.read_text(encoding="utf-8"))
    assert row, "docs/coverage.md lost its bottom row"
    assert tuple(map(int, row.groups())) == (
        report["checked"],
        report["referenced"],
        report["uncovered"],
    ), "update the bottom row of docs/coverage.md from `ryusen-conform coverage`"


def test_every_uncovered_sentence_is_explained() -> None:
    report = coverage_for()
    listed = set(re.findall(r"^\| (R\d{3}) ", DOC.read_text(encoding="utf-8"), flags=re.M))
    uncovered = {
        f"R{rule['number']:03d}" for rule in report["rules"] if rule["status"] == "uncovered"
    }
    assert listed == uncovered, "docs/coverage.md's table of uncovered sentences is stale"


def test_the_split_of_checked_sentences_is_todays() -> None:
    """Issue 33: sentences checked by what an SDK runs are counted apart from those checked only
    by the model server's own tests; the paragraph gives both counts and lists the latter."""
    report = coverage_for()
    text = DOC.read_text(encoding="utf-8")
    split = re.search(
        r"Of the \*\*(\d+)\*\* checked\s+sentences, \*\*(\d+)\*\* are checked by what an SDK runs"
        r".*?\*\*(\d+)\*\* only by the model server's own tests",
        text,
        flags=re.S,
    )
    assert split, "docs/coverage.md lost the paragraph splitting the checked sentences"
    assert tuple(map(int, split.groups())) == (
        report["checked"],
        report["checked_by_sdk"],
        report["checked_by_server_tests_only"],
    ), "update docs/coverage.md's split from `ryusen-conform coverage`"
    listed = re.search(r"The \d+: (.*?) \(the section", text, flags=re.S)
    assert listed, "docs/coverage.md lost its list of sentences checked only by server tests"
    listed = listed.group(1)
    server_only = [
        f"R{rule['number']:03d}" for rule in report["rules"] if rule["checked_by"] == "server_tests"
    ]
    assert re.findall(r"R\d{3}", listed) == server_only
