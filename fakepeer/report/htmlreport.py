"""The HTML report (`--html`): one self-contained page a person opens in a browser.

Like Autobahn's agent-by-case report: totals, the categories x SDKs summary, then every fixture
(rows, grouped by category) by every SDK (columns), each cell coloured by outcome and linking to
the case's details (rule, diff, stderr, wire log) further down the same page. The page loads
nothing: CSS and a few lines of JS are inline in report.html.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from importlib import resources

from fakepeer import __version__
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.report.catalog import Catalog, catalog_from_document
from fakepeer.report.document import RunInfo, order_of, order_text, run_from_document
from fakepeer.report.fleet import pair_headline
from fakepeer.report.htmlcase import case_details
from fakepeer.report.htmltext import anchor, attr, category_anchor, text
from fakepeer.report.registry import Reporter
from fakepeer.report.tally import OUTCOME_STATUS, Cell, Status, Tally, build_tally, case_status
from fakepeer.session.outcomes import OUTCOME_ORDER
from fakepeer.session.results import CaseResult, RunResult

_SLOT = re.compile(r"\{\{(\w+)\}\}")
_FIRST_FINDING = 300  # characters of a failing case's first finding shown in the header list


def to_html(document: dict) -> str:
    """The whole page of a JSON report document, as text (see `html_chunks`)."""
    return "".join(html_chunks(document))


def html_chunks(document: dict) -> Iterator[str]:
    """The page of a JSON report document, piece by piece (a fixture row, a case's details).

    The page walks results and a catalog rebuilt from the document (as `merge` rebuilds them),
    so a run's page and the page of its merged shards are made by the same code. Streamed, so a
    large run's page is never held whole in memory.
    """
    run = run_from_document(document)
    info = RunInfo(
        shard=document.get("shard"),
        timeout=document.get("case_timeout"),
        catalog=catalog_from_document(document),
        corpus=document.get("corpus"),
    )
    tally = build_tally(run)
    slots: dict[str, Callable[[], Iterable[str]]] = {
        "version": lambda: [attr(__version__)],  # used in an attribute and in text
        "title": lambda: [text(f"Ryusen conformance: {run.summary()}")],
        "header": lambda: [_header(run, info)],
        "sdks": lambda: [_sdks(run, tally), _fleet(document.get("fleet") or [])],
        "summary": lambda: [_summary(tally)],
        "grid": lambda: _fixture_grid(run, info.catalog),
        "cases": lambda: _cases(run, info, document),
    }
    # One pass: text put into a slot is never scanned for slots again.
    template = _template()
    at = 0
    for match in _SLOT.finditer(template):
        yield template[at : match.start()]
        yield from slots[match.group(1)]()
        at = match.end()
    yield template[at:]


def _template() -> str:
    return resources.files("fakepeer.report").joinpath("report.html").read_text(encoding="utf-8")


def _header(run: RunResult, info: RunInfo) -> str:
    tally = run.counts()
    status = run.exit_status()
    badges = " ".join(
        f'<span class="s-{OUTCOME_STATUS[o].value}">{tally[o.value]} {o.value}</span>'
        for o in OUTCOME_ORDER
        if tally[o.value]
    )
    facts = [
        f"written {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
        f"ryusen-conform {text(__version__)}",
        *([f"corpus {text(info.corpus['version'])}"] if info.corpus else []),
        f"protocol {text(PROTOCOL_VERSION)}",
        f"{len(run.sdks)} SDK(s)",
        f"{len(_fixture_categories(run))} fixture(s)",
    ]
    if info.timeout is not None:
        facts.append(f"case timeout {info.timeout:g} s")
    if info.shard:
        facts.append(f"shard {text(info.shard)}")
    order = order_text(order_of(run))
    if order:
        facts.append(text(order))
    if run.strict:
        facts.append("--strict")
    if run.lenient:
        facts.append("--lenient")
    verdict = "s-pass" if status == 0 else "s-fail"
    return "\n".join(
        [
            "<h1>Ryusen conformance report</h1>",
            f'<p class="totals"><span class="{verdict}">&nbsp;{text(run.summary())}'
            f'&nbsp;</span> <span class="muted">(exit status {status})</span></p>',
            f'<p class="badges">{badges}</p>',
            f'<p class="muted">{" · ".join(facts)}</p>',
            _list_problems(run),
            _failing_links(run),
            _warning_links(run),
        ]
    )


def _list_problems(run: RunResult) -> str:
    """The --known-failures problems (an id naming no fixture): they fail the run too."""
    if not run.list_problems:
        return ""
    tag = "warning" if run.lenient else "error"
    items = "\n".join(f"<li>{tag}: {text(problem)}</li>" for problem in run.list_problems)
    count = len(run.list_problems)
    return f"<h3>Known-failure list problems ({count})</h3>\n<ul>\n{items}\n</ul>"


def _first_finding(case: CaseResult) -> str:
    """The case's first finding itself (`[value] /body/value: expected 1, got 2`), never only
    the heading of the step it came from."""
    finding = next((f for f in case.findings if not f.consequence), None)
    if finding is None:
        return ""
    text = " ".join(str(finding).split())
    return text if len(text) <= _FIRST_FINDING else text[: _FIRST_FINDING - 3] + "..."


def _failing_links(run: RunResult) -> str:
    """Every case that fails the run, linked, so the first thing on the page is the work to do."""
    items = []
    for index, sdk in enumerate(run.sdks):
        for case in sdk.results:
            if case.fails_run(run.strict, run.lenient):
                first = _first_finding(case)
                detail = f"<br><code>{text(first)}</code>" if first else ""
                items.append(
                    f'<li><a href="#{anchor(index, case.id)}"><code>{text(case.id)}</code></a> '
                    f"on <code>{text(sdk.label)}</code>: {text(case.outcome.value)}: "
                    f"{text(case.reason)}{detail}</li>"
                )
    if not items:
        return ""
    return f"<h3>Cases that fail the run ({len(items)})</h3>\n<ul>\n" + "\n".join(items) + "\n</ul>"


def _warning_links(run: RunResult) -> str:
    """Every warning (a difference in a recommended part, a recommended-level failure), linked,
    with its first difference: the fixture, the part and the decision behind it."""
    items = []
    for index, sdk in enumerate(run.sdks):
        for case in sdk.results:
            if case.counts_as_warning:
                first = _first_finding(case)
                detail = f"<br><code>{text(first)}</code>" if first else ""
                items.append(
                    f'<li><a href="#{anchor(index, case.id)}"><code>{text(case.id)}</code></a> '
                    f"on <code>{text(sdk.label)}</code>: {text(case.reason)}{detail}</li>"
                )
    if not items:
        return ""
    return f"<h3>Warnings ({len(items)})</h3>\n<ul>\n" + "\n".join(items) + "\n</ul>"


def _sdks(run: RunResult, tally: Tally) -> str:
    rows = []
    for sdk in run.sdks:
        caps = "never registered" if sdk.capabilities is None else ", ".join(sdk.capabilities)
        problems = "<br>".join(text(p) for p in sdk.handshake_problems) or "none"
        rows.append(
            "<tr>"
            f"<td><code>{text(sdk.label)}</code></td>"
            f'<td class="mono">{text(" ".join(sdk.command))}</td>'
            f"<td>{text(caps)}</td>"
            f"<td>{problems}</td>"
            f'<td class="num">{sdk.starts}</td>'
            f'<td class="num">{sdk.duration:.2f} s</td>'
            f"{_cell_td(tally.totals[sdk.label], None)}"
            "</tr>"
        )
    return (
        "<table><thead><tr><th>SDK</th><th>command</th><th>capabilities offered</th>"
        "<th>register frame problems</th><th>process starts</th><th>duration</th>"
        "<th>result</th></tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>"
    )


def _fleet(pairs: list[dict]) -> str:
    """The fleet section: per pair of SDKs that served one run, each lifecycle scenario's
    outcome as `@fleet` and `@rolling`, side by side (issue 37)."""
    parts = []
    for pair in pairs:
        variants = sorted({v for outcomes in pair["scenarios"].values() for v in outcomes})
        head = "".join(f"<th>@{text(variant)}</th>" for variant in variants)
        rows = "\n".join(
            f"<tr><td><code>{text(scenario)}</code></td>"
            + "".join(f"<td>{text(outcomes.get(v, '-'))}</td>" for v in variants)
            + "</tr>"
            for scenario, outcomes in pair["scenarios"].items()
        )
        parts.append(
            f'<h3 class="fleet">{text(pair_headline(pair))}</h3>\n<details><summary>'
            f"{len(pair['scenarios'])} scenarios by fleet variant</summary>\n<table><thead><tr>"
            f"<th>scenario</th>{head}</tr></thead><tbody>\n{rows}\n</tbody></table></details>"
        )
    return "\n".join(parts)


def _summary(tally: Tally) -> str:
    head = "".join(f"<th><code>{text(sdk)}</code></th>" for sdk in tally.sdks)
    rows = []
    for category in tally.categories:
        link = f"#{category_anchor(category)}"
        cells = "".join(_cell_td(tally.cell(category, sdk), link) for sdk in tally.sdks)
        rows.append(f'<tr><th><a href="{link}">{text(category)}</a></th>{cells}</tr>')
    totals = "".join(_cell_td(tally.totals[sdk], None) for sdk in tally.sdks)
    rows.append(f"<tr><th>total</th>{totals}</tr>")
    return (
        f"<table><thead><tr><th>category</th>{head}</tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>"
    )


def _cell_td(cell: Cell, link: str | None) -> str:
    content = text(cell.text)
    if link is not None:
        content = f'<a href="{link}">{content}</a>'
    return f'<td class="cell s-{cell.status.value}">{content}</td>'


def _fixture_categories(run: RunResult) -> dict[str, str]:
    """Every fixture any SDK ran -> its category."""
    return {case.id: case.category for sdk in run.sdks for case in sdk.results}


def _fixture_grid(run: RunResult, catalog: Catalog) -> Iterator[str]:
    """Rows: fixtures grouped by category; columns: SDKs; each cell links to the case details."""
    categories = _fixture_categories(run)
    by_sdk = [{case.id: case for case in sdk.results} for sdk in run.sdks]
    head = "".join(f"<th><code>{text(sdk.label)}</code></th>" for sdk in run.sdks)
    yield f'<table class="grid"><thead><tr><th>fixture</th>{head}</tr></thead>\n'
    for category in sorted(set(categories.values())):
        ids = sorted(i for i, c in categories.items() if c == category)
        yield (
            f'<tbody id="{category_anchor(category)}">\n'
            f'<tr class="category"><th colspan="{len(run.sdks) + 1}">{text(category)} '
            f'<span class="muted">({_count(len(ids), "fixture")})</span></th></tr>'
        )
        for fixture_id in ids:
            yield "\n" + _fixture_row(fixture_id, by_sdk, catalog, run)
        yield "\n</tbody>\n"
    yield "</table>"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _fixture_row(
    fixture_id: str, by_sdk: list[dict[str, CaseResult]], catalog: Catalog, run: RunResult
) -> str:
    cells = []
    statuses = []
    for index, cases in enumerate(by_sdk):
        case = cases.get(fixture_id)
        if case is None:
            cells.append('<td class="cell s-empty" title="not run">-</td>')
            continue
        status = case_status(case, run.strict, run.lenient)
        statuses.append(status)
        label = case.outcome.value + (" (warning)" if status is Status.WARN else "")
        tip = f' title="{attr(case.reason)}"' if case.reason else ""
        cells.append(
            f'<td class="cell s-{status.value}"><a href="#{anchor(index, fixture_id)}"{tip}>'
            f"{text(label)}</a></td>"
        )
    row_class = "all-pass" if all(s is Status.PASS for s in statuses) else "problem"
    info = catalog.get(fixture_id)
    title = f' <span class="title">{text(info.title)}</span>' if info else ""
    return (
        f'<tr class="{row_class}"><td class="fixture"><code>{text(fixture_id)}</code>{title}</td>'
        + "".join(cells)
        + "</tr>"
    )


def _cases(run: RunResult, info: RunInfo, document: dict) -> Iterator[str]:
    for index, (sdk, recorded) in enumerate(zip(run.sdks, document["sdks"], strict=True)):
        yield ("\n" if index else "") + f"<h3>SDK <code>{text(sdk.label)}</code></h3>"
        wires = {case["id"]: case.get("wire", []) for case in recorded["cases"]}
        for case in sdk.results:
            yield "\n" + case_details(
                case, anchor(index, case.id), info.catalog.get(case.id), run, wires[case.id]
            )


REPORTER = Reporter(
    name="html",
    options=("--html",),
    help="Write a self-contained HTML report (tally, diffs, wire logs) to PATH.",
    noun="the HTML report",
    render=to_html,
    chunks=html_chunks,
    order=40,
)
