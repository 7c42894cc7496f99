"""A Markdown summary (`--markdown`), for CI job summaries and pull-request comments."""

from __future__ import annotations

from fakepeer.report.document import order_text
from fakepeer.report.groups import GROUP_FROM
from fakepeer.report.registry import Reporter
from fakepeer.report.tally import Cell, Status, Tally, tally_from_json
from fakepeer.session.outcomes import DETAILED, INVARIANT_NOTE, OUTCOME_ORDER, summary_line

_STDERR_LINES = 30
_MARK = {
    Status.PASS: "✅",
    Status.FAIL: "❌",
    Status.WARN: "⚠️",
    Status.SKIP: "⏭️",
    Status.EMPTY: "",
}


def to_markdown(document: dict) -> str:
    """With several SDKs the categories x SDKs table comes first, then each SDK's section."""
    tally = tally_from_json(document["matrix"])
    lines = ["# Ryusen conformance report", "", _versions_line(document), ""]
    order = order_text(document.get("order"))
    if order:
        lines.extend([f"Order: {order}.", ""])
    if len(document["sdks"]) > 1:
        lines.extend(_tally_section(tally))
    budget = [MAX_SUMMARY_BYTES - _FOOTER_BYTES]
    for sdk in document["sdks"]:
        lines.extend(_sdk_section(sdk, tally, budget))
    problems = document.get("list_problems", [])
    if problems:
        tag = "warning" if document.get("lenient") else "error"
        lines.extend(["## Known-failure list problems", ""])
        shown = problems[:_LIST_PROBLEMS_SHOWN]
        lines.extend(f"- {tag}: {_escape(problem[:300])}" for problem in shown)
        if len(problems) > len(shown):
            lines.append(f"- ... and {len(problems) - len(shown)} more (the JSON report has all)")
        lines.append("")
    summary = summary_line(document["summary"], len(problems))
    lines.append(f"**{summary}** (exit status {document['exit_status']})")
    return "\n".join(lines) + "\n"


def _versions_line(document: dict) -> str:
    """Which bench, corpus and protocol produced the verdicts (an author pins all three)."""
    corpus = document.get("corpus") or {}
    parts = [f"ryusen-conform {document['tool']['version']}"]
    if corpus:
        parts.append(f"corpus {corpus['version']} ({corpus['fingerprint']})")
    parts.append(f"protocol {document['protocol_version']}")
    return _escape(", ".join(parts))


def _tally_section(tally: Tally) -> list[str]:
    lines = ["## Categories x SDKs", ""]
    lines.append("| category | " + " | ".join(f"`{_cell_text(s)}`" for s in tally.sdks) + " |")
    lines.append("|---|" + "---:|" * len(tally.sdks))
    for category in tally.categories:
        cells = [_tally_cell(tally.cell(category, sdk)) for sdk in tally.sdks]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    totals = [f"**{_tally_cell(tally.totals[sdk])}**" for sdk in tally.sdks]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    lines.append("")
    return lines


def _tally_cell(cell: Cell) -> str:
    mark = _MARK[cell.status]
    return f"{mark} {cell.text}" if mark else cell.text


def _cell_text(text: str) -> str:
    """Text inside a table cell: a `|` would end the cell, a backtick the code span."""
    return text.replace("|", "\\|").replace("`", "'")


#: GitHub refuses a step summary over 1 MiB, and a job's summaries together share that limit:
#: details stop well below it, at this many bytes (the JSON, JUnit and HTML reports keep every
#: case), so a second step's summary still fits.
MAX_SUMMARY_BYTES = 400_000
_FOOTER_BYTES = 40_000  # room for the tables after the cut, the list problems and the last line
#: Known-failure list problems shown before the rest are counted (each is one line).
_LIST_PROBLEMS_SHOWN = 100


def _sdk_section(sdk: dict, tally: Tally, budget: list[int]) -> list[str]:
    caps = sdk["capabilities"]
    offered = ", ".join(caps) if caps is not None else "(never registered)"
    label = sdk["label"].replace("`", "'")
    lines = [f"## SDK `{label}`", "", f"Capabilities offered: {offered}", ""]
    outcomes = [outcome.value for outcome in OUTCOME_ORDER]
    lines.append("| category | " + " | ".join(outcomes) + " |")
    lines.append("|---|" + "---:|" * len(outcomes))
    for category in tally.categories:
        counts = tally.cell(category, sdk["label"]).counts
        if any(counts.values()):
            lines.append(f"| {category} | " + " | ".join(str(counts[o]) for o in outcomes) + " |")
    tally = sdk["summary"]
    lines.append("| **total** | " + " | ".join(f"**{tally[o]}**" for o in outcomes) + " |")
    lines.append("")
    for piece in sdk.get("missing_pieces") or ():
        differ = piece["also_differ"]
        listed = f": {', '.join(f'`{i}`' for i in differ)}" if differ else ""
        lines.extend([
            f"**Missing:** the host lacks `{piece['piece']}` (read {piece['file']} "
            f"{piece['section']}): {piece['cases']} case(s) needed it and do not pass; "
            f"{piece['answered_as_expected']} of them answered as expected, {len(differ)} also "
            f"differ in their answers{listed}",
            "",
        ])  # fmt: skip
    problems = [
        c
        for c in sdk["cases"]
        if (c["outcome"] in DETAILED or c.get("warned"))
        and not (c.get("missing") and not c["diff"])
    ]
    if problems:
        warned = any(c.get("warned") for c in problems)
        lines.extend(["### Failing cases" + (" and warnings" if warned else ""), ""])
    budget[0] -= len("\n".join(lines).encode("utf-8"))
    groups = _groups(problems)
    for shown, group in enumerate(groups):
        details = _details(group)
        size = len("\n".join(details).encode("utf-8")) + 1
        if size > budget[0]:
            left = sum(len(g) for g in groups[shown:])
            lines.extend(
                [
                    f"*{left} more failing case(s) not detailed here: this summary is capped at "
                    f"{MAX_SUMMARY_BYTES // 1000} KB, well under GitHub's 1 MiB step-summary "
                    "limit; see the HTML or JSON report.*",
                    "",
                ]
            )
            budget[0] = 0
            break
        budget[0] -= size
        lines.extend(details)
    return lines


def _details(group: list[dict]) -> list[str]:
    """One failing case (or a group with one cause) as a <details> block."""
    lines: list[str] = []
    if group:
        case = group[0]
        warning = case["outcome"] != "xpass" and not case["fails_run"]
        tag = "warning" if warning or case.get("warned") else case["outcome"]
        if case.get("warned") and case["fails_run"]:
            tag = "warning (--strict: fails the run)"
        if case.get("fails_run_by_invariant"):
            tag = f"{tag} ({INVARIANT_NOTE})"
        head = f"<code>{case['id']}</code>"
        if len(group) >= GROUP_FROM:
            head = f"{len(group)} cases ({head} and {len(group) - 1} more)"
        lines.append(
            f"<details><summary>{head} ({case['category']}, "
            f"{case['level']}): {tag}: {_escape(case['reason'])}</summary>"
        )
        lines.append("")
        if len(group) >= GROUP_FROM:
            others = ", ".join(f"`{c['id']}`" for c in group[1:MARKDOWN_NAMED])
            more = len(group) - MARKDOWN_NAMED
            tail = f" and {more} more" if more > 0 else ""
            lines.extend([f"The same for: {others}{tail}", ""])
        if case["outcome"] == "xpass":
            lines.extend(["Listed as a known failure, but it passed: take it off the list.", ""])
        if case["diff_text"]:
            lines.extend(["```", case["diff_text"], "```"])
        if case["stderr_tail"]:
            tail = "\n".join(case["stderr_tail"].splitlines()[-_STDERR_LINES:])
            lines.extend(["SDK stderr (tail):", "```", tail, "```"])
        lines.extend(["</details>", ""])
    return lines


#: Ids a rolled-up group names in the Markdown summary (the JSON and JUnit reports have all).
MARKDOWN_NAMED = 50


def _groups(cases: list[dict]) -> list[list[dict]]:
    """Cases with one outcome, reason and diff together (fakepeer.report.groups, for dicts)."""
    by_cause: dict[tuple, list[dict]] = {}
    for case in cases:
        key = (case["outcome"], case["level"], case["reason"], case["diff_text"])
        by_cause.setdefault(key, []).append(case)
    groups: list[list[dict]] = []
    for members in by_cause.values():
        groups.extend([members] if len(members) >= GROUP_FROM else [[c] for c in members])
    return sorted(groups, key=lambda group: group[0]["id"])


def _escape(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


REPORTER = Reporter(
    name="markdown",
    options=("--markdown",),
    help="Write a Markdown summary (for CI job summaries) to PATH.",
    noun="the Markdown summary",
    render=to_markdown,
    order=30,
)
