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
