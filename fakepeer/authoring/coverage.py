"""`ryusen-conform coverage`: which RFD 2 sentences the fixtures' quotes fall in, and which none do.

A rule is one sentence of RFD 2 (docs.parse_rfd). Coverage is by quote, so it measures what the
fixtures claim to check; an uncovered sentence is either untested or not testable at the SDK.
"""

from __future__ import annotations

from pathlib import Path

from fakepeer.authoring.docs import Rfd, load_rfd
from fakepeer.cases import Fixture, load_fixtures, repository_root


def build_coverage(fixtures: list[Fixture], rfd: Rfd | None = None) -> dict:
    """Each sentence with the fixture ids whose quotes fall in it, and the totals."""
    document = rfd if rfd is not None else load_rfd()
    by_sentence: dict[int, list[str]] = {sentence.number: [] for sentence in document.sentences}
    unmatched = []
    for fixture in fixtures:
        hits = document.sentences_for(fixture.rule.quote)
        if not hits:
            unmatched.append(fixture.id)
        for sentence in hits:
            by_sentence[sentence.number].append(fixture.id)
    rules = [
        {
            "number": sentence.number,
            "paragraph": sentence.paragraph,
            "text": sentence.text,
            "fixtures": sorted(by_sentence[sentence.number]),
        }
        for sentence in document.sentences
    ]
    covered = sum(1 for rule in rules if rule["fixtures"])
    return {
        "total": len(rules),
        "covered": covered,
        "uncovered": len(rules) - covered,
        "fixtures": len(fixtures),
        "unmatched_fixtures": sorted(unmatched),
        "rules": rules,
    }


def coverage_for(paths: list[Path] | None = None) -> dict:
    """Coverage of the fixtures under `paths` (default: the repository's fixtures/)."""
    fixtures = load_fixtures(paths if paths else [repository_root() / "fixtures"])
    return build_coverage(fixtures)


def render_text(report: dict, width: int = 100, uncovered_only: bool = False) -> str:
    """A readable listing: covered rules with their fixtures, then the uncovered sentences."""
    lines = []
    if not uncovered_only:
        lines.append("Covered RFD 2 rules:")
        for rule in report["rules"]:
            if rule["fixtures"]:
                count = len(rule["fixtures"])
                text = _cut(rule["text"], width - 14)
                lines.append(f"  R{rule['number']:03d} ({count}) {text}")
                for ident in rule["fixtures"]:
                    lines.append(f"        - {ident}")
        lines.append("")
    lines.append("Uncovered RFD 2 sentences:")
    for rule in report["rules"]:
        if not rule["fixtures"]:
            lines.append(f"  R{rule['number']:03d} {_cut(rule['text'], width - 8)}")
    lines.append("")
    lines.append(
        f"{report['covered']} of {report['total']} RFD 2 sentences covered, "
        f"{report['uncovered']} uncovered, by {report['fixtures']} fixtures"
    )
    return "\n".join(lines) + "\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 1)] + "…"
