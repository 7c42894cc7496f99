"""What a report says about a fixture beyond its result: its title and the RFD 2 rule it checks.

Results (CaseResult) carry only what the run produced; the reports that a person reads (HTML,
and the JSON report so a merged report can be rendered again) also name the rule under test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fakepeer.cases.model import Fixture, Rule


@dataclass(frozen=True)
class CaseInfo:
    """A fixture's title and the rule it checks (the fixture model's `Rule`)."""

    title: str
    rule: Rule

    def rule_json(self) -> dict:
        """The JSON report's `rule` of the case (report.schema.json: no decision)."""
        return self.rule.to_json(decision=False)


Catalog = Mapping[str, CaseInfo]


def catalog_from_fixtures(fixtures: Iterable[Fixture]) -> dict[str, CaseInfo]:
    """Fixture id -> CaseInfo, for the fixtures a run selected."""
    return {fixture.id: CaseInfo(fixture.title, fixture.rule) for fixture in fixtures}


def catalog_from_document(document: dict) -> dict[str, CaseInfo]:
    """The CaseInfo the JSON report recorded per case (reports without it give an empty map)."""
    catalog = {}
    for sdk in document.get("sdks", []):
        for case in sdk.get("cases", []):
            rule = case.get("rule")
            if isinstance(rule, dict) and "title" in case:
                catalog[case["id"]] = CaseInfo(case["title"], Rule.from_json(rule))
    return catalog
