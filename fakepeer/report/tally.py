"""The cross-SDK tally: categories (rows) by SDKs (columns), outcome counts in each cell.

Every report format renders this one model, so the console, JSON, JUnit, Markdown and HTML
reports cannot disagree about what a cell says.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from fakepeer.session.outcomes import Outcome, counts
from fakepeer.session.results import CaseResult, RunResult

_NOT_PASSING = (Outcome.FAIL, Outcome.ERROR, Outcome.SKIP, Outcome.XFAIL, Outcome.XPASS)


class Status(StrEnum):
    """How a cell reads at a glance; it chooses the cell's colour in every format."""

    PASS = "pass"  # every case passed
    FAIL = "fail"  # at least one case fails the run
    WARN = "warn"  # warnings, failures that do not fail the run (xpass without --strict)
    SKIP = "skip"  # nothing failed, but some cases were skipped or are known failures
    EMPTY = "empty"  # this SDK ran no case of this category (e.g. one shard of a run)


@dataclass(frozen=True)
class Cell:
    """The cases of one category (or of all of them) run against one SDK."""

    counts: dict[str, int]
    fails_run: int
    #: Cases counted as warnings (`CaseResult.counts_as_warning`): no outcome of their own.
    warnings: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> int:
        return self.counts[Outcome.PASS.value]

    @property
    def status(self) -> Status:
        if self.total == 0:
            return Status.EMPTY
        if self.fails_run:
            return Status.FAIL
        if self.counts["fail"] or self.counts["error"] or self.counts["xpass"] or self.warnings:
            return Status.WARN
        if self.passed < self.total:
            return Status.SKIP
        return Status.PASS

    @property
    def text(self) -> str:
        """`26/26` when all pass, else `24/26` followed by the count of every other outcome."""
        if self.total == 0:
            return "-"
        head = f"{self.passed}/{self.total}"
        rest = [f"{self.counts[o.value]} {o.value}" for o in _NOT_PASSING if self.counts[o.value]]
        if self.warnings:
            rest.append(f"{self.warnings} warn")
        return " ".join([head, *rest])

    def to_json(self) -> dict:
        record = {**self.counts, "total": self.total, "fails_run": self.fails_run}
        return {**record, "warnings": self.warnings}

    @classmethod
    def from_json(cls, record: dict) -> Cell:
        """A cell of the JSON report's `matrix` (what the file formats render from)."""
        return cls(
            {o.value: record.get(o.value, 0) for o in Outcome},
            record["fails_run"],
            record.get("warnings", 0),
        )


@dataclass(frozen=True)
class Tally:
    """Rows are categories in name order, columns are SDK labels in run order."""

    sdks: tuple[str, ...]
    categories: tuple[str, ...]
    cells: dict[tuple[str, str], Cell]  # (category, sdk label) -> cell
    totals: dict[str, Cell]  # sdk label -> cell over every category

    def cell(self, category: str, sdk: str) -> Cell:
        return self.cells[(category, sdk)]

    def to_json(self) -> dict:
        """The `matrix` member of the JSON report (report.schema.json `#/$defs/matrix`)."""
        return {
            "sdks": list(self.sdks),
            "categories": list(self.categories),
            "rows": [
                {
                    "category": category,
                    "cells": [
                        {"sdk": sdk, **self.cell(category, sdk).to_json()} for sdk in self.sdks
                    ],
                }
                for category in self.categories
            ],
            "totals": [{"sdk": sdk, **self.totals[sdk].to_json()} for sdk in self.sdks],
        }


def tally_from_json(record: dict) -> Tally:
    """The Tally of a JSON report's `matrix` member."""
    sdks = tuple(record["sdks"])
    cells = {
        (row["category"], cell["sdk"]): Cell.from_json(cell)
        for row in record["rows"]
        for cell in row["cells"]
    }
    totals = {cell["sdk"]: Cell.from_json(cell) for cell in record["totals"]}
    return Tally(sdks, tuple(record["categories"]), cells, totals)


def build_tally(run: RunResult) -> Tally:
    """Count every SDK's outcomes per category."""
    labels = tuple(sdk.label for sdk in run.sdks)
    categories = tuple(sorted({case.category for sdk in run.sdks for case in sdk.results}))
    cells = {}
    totals = {}
    for sdk in run.sdks:
        by_category: dict[str, list[CaseResult]] = {category: [] for category in categories}
        for case in sdk.results:
            by_category[case.category].append(case)
        for category, cases in by_category.items():
            cells[(category, sdk.label)] = _cell(cases, run.strict, run.lenient)
        totals[sdk.label] = _cell(sdk.results, run.strict, run.lenient)
    return Tally(sdks=labels, categories=categories, cells=cells, totals=totals)


def _cell(cases: list[CaseResult], strict: bool, lenient: bool) -> Cell:
    return Cell(
        counts=counts(case.outcome for case in cases),
        fails_run=sum(1 for case in cases if case.fails_run(strict, lenient)),
        warnings=sum(1 for case in cases if case.counts_as_warning),
    )


#: How an outcome reads at a glance when nothing else is known (a badge of a count).
OUTCOME_STATUS = {
    Outcome.PASS: Status.PASS,
    Outcome.FAIL: Status.FAIL,
    Outcome.ERROR: Status.FAIL,
    Outcome.XPASS: Status.WARN,
    Outcome.SKIP: Status.SKIP,
    Outcome.XFAIL: Status.SKIP,
}


def case_status(case: CaseResult, strict: bool, lenient: bool = False) -> Status:
    """The status of a single case, for the per-fixture grid of the HTML report: the outcome's,
    except that a failure the run tolerates is a warning and one it does not is a failure."""
    if case.fails_run(strict, lenient):
        return Status.FAIL
    if case.warned:
        return Status.WARN
    status = OUTCOME_STATUS[case.outcome]
    return Status.WARN if status is Status.FAIL else status
