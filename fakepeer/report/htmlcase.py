"""One case's details section in the HTML report: rule, outcome, diff, stderr and wire log.

Each section is a `<details>` element whose id the grid cells link to, so a failing case is one
click from the exchange that produced it.
"""

from __future__ import annotations

from fakepeer.compare import Finding
from fakepeer.report.catalog import CaseInfo
from fakepeer.report.htmltext import attr, compact_json, pretty_json, text
from fakepeer.report.tally import case_status
from fakepeer.session.outcomes import INVARIANT_NOTE
from fakepeer.session.results import CaseResult, RunResult, dropped_line

STDERR_LINES = 200
_ARROW = {"sent": "bench → SDK", "received": "SDK → bench"}


def case_details(
    case: CaseResult, anchor: str, info: CaseInfo | None, run: RunResult, wire: list[dict]
) -> str:
    """The `<details id=anchor>` section of one case run against one SDK; `wire` is the case's
    wire log as the JSON report records it (payloads over 64 KiB already truncated)."""
    strict = run.strict
    status = case_status(case, strict, run.lenient)
    title = f" — {text(info.title)}" if info else ""
    parts = [
        f'<details class="case s-{status.value}" id="{anchor}">',
        f'<summary><span class="outcome s-{status.value}">{_outcome_label(case, strict)}</span>'
        f"<code>{text(case.id)}</code>{title}</summary>",
        '<div class="body">',
        _facts(case, info, run),
        _diff(case),
        _stderr(case),
        _wire(wire),
        "</div>",
        "</details>",
    ]
    return "\n".join(part for part in parts if part)


def _outcome_label(case: CaseResult, strict: bool) -> str:
    if case.is_warning(strict) or case.warned:
        return f"{case.outcome.value} (warning)"
    return case.outcome.value


def _facts(case: CaseResult, info: CaseInfo | None, run: RunResult) -> str:
    strict = run.strict
    rows = [("fixture", f"<code>{text(case.id)}</code>")]
    if info is not None:
        rows.append(("title", text(info.title)))
        where = f"RFD 2, {text(info.rule.section)}"
        if info.rule.protocol:
            where += f"; settled in protocol {text(info.rule.protocol)}"
        rows.append(("rule", f"<blockquote>{text(info.rule.quote)}</blockquote>{where}"))
    rows.append(("category", text(case.category)))
    rows.append(("level", text(case.level)))
    outcome = _outcome_label(case, strict)
    if case.raw_outcome is not case.outcome:
        outcome += f" (raw outcome {text(case.raw_outcome.value)}; listed as a known failure)"
    rows.append(("outcome", outcome))
    fails = "yes" if case.fails_run(strict, run.lenient) else "no"
    if case.fails_only_by_invariant(strict):
        fails += f": {text(INVARIANT_NOTE)}"
    rows.append(("fails the run", fails))
    if case.reason:
        rows.append(("reason", text(case.reason)))
    rows.append(("duration", f"{case.duration:.3f} s"))
    body = "\n".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<dl class="facts">\n{body}\n</dl>'


def _diff(case: CaseResult) -> str:
    if not case.findings:
        return ""
    rows = []
    for finding in case.findings:
        record = finding.to_json()
        rows.append(
            "<tr>"
            f"<td><code>{text(finding.pointer or '(root)')}</code></td>"
            f"<td>{text(finding.kind)}</td>"
            f"<td>{text(_level(finding))}</td>"
            f"<td>{text(finding.message)}</td>"
            f"<td>{_value(record, 'expected')}</td>"
            f"<td>{_value(record, 'actual')}</td>"
            "</tr>"
        )
    return (
        "<h3>Diff</h3>\n"
        '<table class="diff"><thead><tr><th>JSON pointer</th><th>kind</th><th>level</th>'
        "<th>finding</th>"
        "<th>expected</th><th>actual</th></tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>"
        + (f"\n<p>{text(dropped_line(case.findings_dropped))}</p>" if case.findings_dropped else "")
    )


def _level(finding: Finding) -> str:
    """`required`, or `recommended (D-…)` with the decision the recommended value comes from."""
    if not finding.recommended:
        return "required"
    return f"recommended ({finding.rule})" if finding.rule else "recommended"


def _value(record: dict, key: str) -> str:
    if key not in record:
        return '<span class="muted">(absent)</span>'
    return f"<pre>{compact_json(record[key])}</pre>"


def _stderr(case: CaseResult) -> str:
    if not case.stderr_tail.strip():
        return ""
    lines = case.stderr_tail.rstrip().splitlines()
    shown = lines[-STDERR_LINES:]
    note = f" (last {len(shown)} of {len(lines)} lines)" if len(lines) > len(shown) else ""
    return f"<h3>SDK stderr (tail){note}</h3>\n<pre>{text(chr(10).join(shown))}</pre>"


def _wire(records: list[dict]) -> str:
    if not records:
        return '<h3>Wire log</h3>\n<p class="muted">No frame was exchanged.</p>'
    frames = "\n".join(_frame(n, record) for n, record in enumerate(records, 1))
    return f"<h3>Wire log ({len(records)} frames)</h3>\n{frames}"


def _frame(number: int, data: dict) -> str:
    direction = attr(data["direction"])
    arrow = _ARROW.get(data["direction"], direction)
    head = f"#{number} {arrow} +{data['at']:.4f} s, {data['size']} bytes"
    payload = data.get("json")
    if isinstance(payload, dict) and isinstance(payload.get("kind"), str):
        head += f": <code>{text(payload['kind'])}</code>"
        if isinstance(payload.get("id"), str):
            head += f" id <code>{text(payload['id'])}</code>"
    if data.get("truncated"):
        note = f"truncated: only the first bytes are kept, as text; SHA-256 {text(data['sha256'])}"
        body = f'<p class="muted">{note}</p><pre>{text(data["text"])}</pre>'
    elif "json" in data:
        body = f"<pre>{pretty_json(payload)}</pre>"
    elif "text" in data:
        body = f'<p class="muted">not JSON (UTF-8 text)</p><pre>{text(data["text"])}</pre>'
    else:
        body = f'<p class="muted">not UTF-8 (base64)</p><pre>{text(data["base64"])}</pre>'
    return f'<div class="frame {direction}"><div class="head">{head}</div>\n{body}</div>'
