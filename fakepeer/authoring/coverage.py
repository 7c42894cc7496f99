"""`ryusen-conform coverage`: RFD 2 sentences checked, only referenced, or neither; decisions.

A rule is one sentence of RFD 2 (docs.parse_rfd). Every place that cites RFD 2 is a *citation* (a
source, an id, a quote). A sentence is **checked** when a citation that justifies an expectation
falls in it: the quote of a fixture that names no project decision (RFD 2 itself demands what the
fixture expects). It is **referenced** when only other citations fall in it: the quote of a fixture
whose expectation rests on a decision (`rule.decision`), a decision's own RFD 2 text
(docs/decisions.md), or an *RFD 2* quote in docs/protocol.md. Decisions are reported apart, with the
fixtures that check each.

A checked sentence is checked **by what an SDK runs** when a fixture (an exchange or a lifecycle
scenario) justifies it, and **only by the model server's tests** when every justifying citation
comes from another module (the server's rules table: tests/server, which no SDK ever runs). The
two are counted apart, so a sentence that only the bench's own model is tested on is never
mistaken for one an SDK is held to.

More citation sources (server-side rule checks, say) plug in without changing this module: a
module listed in CITATION_MODULES exposes `citations() -> Iterable[Citation]`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fakepeer.authoring.docs import (
    DECISIONS_PATH,
    PROTOCOL_PATHS,
    Rfd,
    decision_ids,
    load_rfd,
)
from fakepeer.cases import Fixture, load_fixtures, repository_root

#: Modules that add citations (each defines `citations()`); other helpers append theirs here.
CITATION_MODULES: list[str] = ["fakepeer.server.rules"]


@dataclass(frozen=True)
class Citation:
    """One place that quotes RFD 2. `justifies`: the quote alone demands what `ident` checks."""

    source: str
    ident: str
    quote: str
    justifies: bool


def fixture_citations(fixtures: Iterable[Fixture]) -> list[Citation]:
    """A fixture's quote justifies unless its expectation rests on a project decision."""
    return [
        Citation("fixture", f.id, f.rule.quote, justifies=f.rule.decision is None) for f in fixtures
    ]


_DOC_QUOTE = re.compile(r"\*RFD 2\*\*?:\*?\*?\s*\"([^\"]+)\"")
_DECISION_BLOCK = re.compile(r"^## (D-[A-Z0-9-]+)\s*$(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_QUOTED = re.compile(r"\"([^\"]+)\"")


def document_citations(root: Path | None = None) -> list[Citation]:
    """*RFD 2* quotes in the protocol documents and the RFD 2 text of each decision: references."""
    base = root if root is not None else repository_root()
    found: list[Citation] = []
    for path in PROTOCOL_PATHS:
        if (base / path).is_file():
            for match in _DOC_QUOTE.finditer((base / path).read_text(encoding="utf-8")):
                found.append(Citation("protocol.md", path.name, match.group(1), justifies=False))
    for ident, quote in decision_quotes(base):
        found.append(Citation("decision", ident, quote, justifies=False))
    return found


def decision_quotes(root: Path | None = None) -> list[tuple[str, str]]:
    """(decision id, quote) for every quote on the `**RFD 2**:` line(s) of each decision."""
    base = root if root is not None else repository_root()
    path = base / DECISIONS_PATH
    if not path.is_file():
        return []
    quotes = []
    for match in _DECISION_BLOCK.finditer(path.read_text(encoding="utf-8")):
        ident, body = match.group(1), match.group(2)
        rfd_part = body.split("- **Decision**", 1)[0]
        for quote in _QUOTED.findall(rfd_part):
            quotes.append((ident, quote))
    return quotes


def extra_citations() -> list[Citation]:
    """Citations from the modules in CITATION_MODULES."""
    found: list[Citation] = []
    for name in CITATION_MODULES:
        found.extend(importlib.import_module(name).citations())
    return found


def build_coverage(
    fixtures: list[Fixture],
    rfd: Rfd | None = None,
    citations: Iterable[Citation] | None = None,
    decisions: Iterable[str] | None = None,
) -> dict:
    """Each sentence with what checks and what references it; decisions with their fixtures."""
    document = rfd if rfd is not None else load_rfd()
    cited = fixture_citations(fixtures)
    cited += list(citations) if citations is not None else document_citations() + extra_citations()
    checked: dict[int, set[str]] = {s.number: set() for s in document.sentences}
    run_checked: set[int] = set()  # justified by a fixture: something an SDK runs
    referenced: dict[int, set[str]] = {s.number: set() for s in document.sentences}
    unmatched = set()
    for citation in cited:
        hits = document.sentences_for(citation.quote)
        if not hits and citation.source == "fixture":
            unmatched.add(citation.ident)
        label = citation.ident if citation.source == "fixture" else citation_label(citation)
        for sentence in hits:
            (checked if citation.justifies else referenced)[sentence.number].add(label)
            if citation.justifies and citation.source == "fixture":
                run_checked.add(sentence.number)
    rules = [
        {
            "number": sentence.number,
            "paragraph": sentence.paragraph,
            "text": sentence.text,
            "status": _status(checked[sentence.number], referenced[sentence.number]),
            "checked_by": _checked_by(sentence.number, checked, run_checked),
            "fixtures": sorted(checked[sentence.number]),
            "references": sorted(referenced[sentence.number]),
        }
        for sentence in document.sentences
    ]
    known = list(decisions) if decisions is not None else list(decision_ids())
    by_decision: dict[str, list[str]] = {ident: [] for ident in known}
    for fixture in fixtures:
        if fixture.rule.decision is not None:
            by_decision.setdefault(fixture.rule.decision, []).append(fixture.id)
    decision_rows = [
        {"id": ident, "fixtures": sorted(ids)} for ident, ids in sorted(by_decision.items())
    ]
    count = {status: sum(1 for r in rules if r["status"] == status) for status in _STATUSES}
    return {
        "total": len(rules),
        "checked": count["checked"],
        "checked_by_sdk": sum(1 for r in rules if r["checked_by"] == CHECKED_BY_SDK),
        "checked_by_server_tests_only": sum(
            1 for r in rules if r["checked_by"] == CHECKED_BY_SERVER_TESTS
        ),
        "referenced": count["referenced"],
        "uncovered": count["uncovered"],
        "fixtures": len(fixtures),
        "fixtures_on_decisions": sum(1 for f in fixtures if f.rule.decision is not None),
        "unmatched_fixtures": sorted(unmatched),
        "rules": rules,
        "decisions": decision_rows,
        "decisions_total": len(decision_rows),
        "decisions_checked": sum(1 for row in decision_rows if row["fixtures"]),
    }


_STATUSES = ("checked", "referenced", "uncovered")
#: `checked_by` of a checked sentence: a fixture an SDK runs, or only the model server's tests.
CHECKED_BY_SDK = "sdk"
CHECKED_BY_SERVER_TESTS = "server_tests"


def _checked_by(number: int, checked: dict[int, set[str]], run_checked: set[int]) -> str | None:
    if not checked[number]:
        return None
    return CHECKED_BY_SDK if number in run_checked else CHECKED_BY_SERVER_TESTS


def _status(checked: set[str], referenced: set[str]) -> str:
    if checked:
        return "checked"
    return "referenced" if referenced else "uncovered"


def citation_label(citation: Citation) -> str:
    """How a non-fixture citation is listed: `decision:D-FRAMING`, `protocol.md`."""
    if citation.source == "decision":
        return f"decision:{citation.ident}"
    if citation.source == citation.ident:
        return citation.source
    return f"{citation.source}:{citation.ident}"


def coverage_for(paths: list[Path] | None = None) -> dict:
    """Coverage of the fixtures under `paths` (default: the repository's fixtures/)."""
    fixtures = load_fixtures(paths if paths else [repository_root() / "fixtures"])
    if paths:  # fixtures of one's own: the documents cite too, the repository's server tests not
        return build_coverage(fixtures, citations=document_citations())
    return build_coverage(fixtures)


def render_text(report: dict, width: int = 100, uncovered_only: bool = False) -> str:
    """Checked rules with their fixtures, referenced-only rules, uncovered ones, then decisions."""
    lines = []
    rules = report["rules"]
    if not uncovered_only:
        sections = (
            (CHECKED_BY_SDK, "RFD 2 sentences checked by what an SDK runs (a fixture or lifecycle"
             " scenario whose quote justifies it):"),
            (CHECKED_BY_SERVER_TESTS, "RFD 2 sentences checked only by the model server's own"
             " tests (tests/server; no SDK runs them):"),
        )  # fmt: skip
        for checked_by, heading in sections:
            lines.append(heading)
            for rule in (r for r in rules if r["checked_by"] == checked_by):
                text = _cut(rule["text"], width - 14)
                lines.append(f"  R{rule['number']:03d} ({len(rule['fixtures'])}) {text}")
                lines.extend(f"        - {ident}" for ident in rule["fixtures"])
            lines.append("")
        lines.append("RFD 2 sentences only referenced (by a decision, protocol.md, or a fixture")
        lines.append("whose expectation rests on a decision):")
        for rule in (r for r in rules if r["status"] == "referenced"):
            lines.append(f"  R{rule['number']:03d} {rule['text']}")  # whole: to copy a quote
            lines.append(f"        by {_cut(', '.join(rule['references']), width - 11)}")
        lines.append("")
    lines.append("Uncovered RFD 2 sentences:")
    for rule in (r for r in rules if r["status"] == "uncovered"):
        lines.append(f"  R{rule['number']:03d} {rule['text']}")  # whole: to copy a quote
    lines.append("")
    if not uncovered_only:
        lines.append("Decisions (docs/decisions.md) and the fixtures that check them:")
        for row in report["decisions"]:
            fixtures = ", ".join(row["fixtures"]) if row["fixtures"] else "(no fixture)"
            lines.append(f"  {row['id']} ({len(row['fixtures'])}): {_cut(fixtures, width - 20)}")
        lines.append("")
    lines.append(
        f"{report['checked']} of {report['total']} RFD 2 sentences checked "
        f"({report['checked_by_sdk']} by what an SDK runs, "
        f"{report['checked_by_server_tests_only']} only by the model server's tests), "
        f"{report['referenced']} only referenced, {report['uncovered']} uncovered, "
        f"by {report['fixtures']} fixtures ({report['fixtures_on_decisions']} on decisions); "
        f"{report['decisions_checked']} of {report['decisions_total']} decisions checked"
    )
    return "\n".join(lines) + "\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"
