"""A Markdown summary (`--markdown`), for CI job summaries and pull-request comments."""

from __future__ import annotations

from pathlib import Path

from fakepeer import atomic
from fakepeer.report.matrix import Cell, Status, build_matrix
from fakepeer.session.outcomes import OUTCOME_ORDER, summary_line
from fakepeer.session.results import RunResult, SdkRun

_STDERR_LINES = 30
_MARK = {
    Status.PASS: "✅",
    Status.FAIL: "❌",
    Status.WARN: "⚠️",
    Status.SKIP: "⏭️",
    Status.EMPTY: "",
}


def to_markdown(run: RunResult) -> str:
    """With several SDKs the categories x SDKs table comes first, then each SDK's section."""
    lines = ["# Ryusen conformance report", ""]
    if len(run.sdks) > 1:
        lines.extend(_matrix_section(run))
    for sdk in run.sdks:
        lines.extend(_sdk_section(sdk, run.strict))
    lines.append(f"**{summary_line(run.counts())}** (exit status {run.exit_status()})")
    return "\n".join(lines) + "\n"


def _matrix_section(run: RunResult) -> list[str]:
    matrix = build_matrix(run)
    lines = ["## Categories x SDKs", ""]
    lines.append("| category | " + " | ".join(f"`{_cell_text(s)}`" for s in matrix.sdks) + " |")
    lines.append("|---|" + "---:|" * len(matrix.sdks))
    for category in matrix.categories:
        cells = [_matrix_cell(matrix.cell(category, sdk)) for sdk in matrix.sdks]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    totals = [f"**{_matrix_cell(matrix.totals[sdk])}**" for sdk in matrix.sdks]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    lines.append("")
    return lines


def _matrix_cell(cell: Cell) -> str:
    mark = _MARK[cell.status]
    return f"{mark} {cell.text}" if mark else cell.text


def _cell_text(text: str) -> str:
    """Text inside a table cell: a `|` would end the cell, a backtick the code span."""
    return text.replace("|", "\\|").replace("`", "'")


def _sdk_section(sdk: SdkRun, strict: bool) -> list[str]:
    caps = ", ".join(sdk.capabilities) if sdk.capabilities is not None else "(never registered)"
    label = sdk.label.replace("`", "'")
    lines = [f"## SDK `{label}`", "", f"Capabilities offered: {caps}", ""]
    outcomes = [outcome.value for outcome in OUTCOME_ORDER]
    lines.append("| category | " + " | ".join(outcomes) + " |")
    lines.append("|---|" + "---:|" * len(outcomes))
    categories = sorted({case.category for case in sdk.results})
    for category in categories:
        row = [
            sum(1 for c in sdk.results if c.category == category and c.outcome == o)
            for o in outcomes
        ]
        lines.append(f"| {category} | " + " | ".join(str(n) for n in row) + " |")
    tally = sdk.counts()
    lines.append("| **total** | " + " | ".join(f"**{tally[o]}**" for o in outcomes) + " |")
    lines.append("")
    problems = [c for c in sdk.results if c.outcome.value in ("fail", "error", "xpass")]
    if problems:
        lines.extend(["### Failing cases", ""])
    for case in problems:
        tag = "warning" if case.is_warning(strict) else case.outcome.value
        lines.append(
            f"<details><summary><code>{case.id}</code> ({case.category}, {case.level}): "
            f"{tag}: {_escape(case.reason)}</summary>"
        )
        lines.append("")
        if case.diff:
            lines.extend(["```", case.diff, "```"])
        if case.stderr_tail:
            tail = "\n".join(case.stderr_tail.splitlines()[-_STDERR_LINES:])
            lines.extend(["SDK stderr (tail):", "```", tail, "```"])
        lines.extend(["</details>", ""])
    return lines


def _escape(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


def write_markdown(run: RunResult, path: Path) -> None:
    atomic.write_text(path, to_markdown(run))
