"""Failures with one cause, rolled up: a host that never answers fails 500 cases the same way.

The console and the Markdown and HTML reports show a group of cases whose outcome, reason and
diff are the same once ("516 cases: registration handshake failed ..."), with the first case in
full and the other ids listed, instead of 516 identical paragraphs. JUnit keeps one testcase per
case (CI test views count them), and so does the JSON report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fakepeer.session.results import CaseResult

#: Cases with one cause shown one by one; from this many on they are rolled up.
GROUP_FROM = 3
#: Ids named in a group's line (the rest are counted).
NAMED_IDS = 10


@dataclass(frozen=True)
class Group:
    """Cases of one SDK with the same outcome, reason and diff (one case: no roll-up)."""

    cases: tuple[CaseResult, ...]

    @property
    def first(self) -> CaseResult:
        return self.cases[0]

    @property
    def rolled_up(self) -> bool:
        return len(self.cases) >= GROUP_FROM

    def others(self) -> str:
        """`a, b, c and 12 more` for the cases after the first."""
        rest = [case.id for case in self.cases[1:]]
        named = ", ".join(rest[:NAMED_IDS])
        more = len(rest) - NAMED_IDS
        return named + (f" and {more} more" if more > 0 else "")


def group_cases(cases: Iterable[CaseResult]) -> list[Group]:
    """Groups in the order their first case comes; a group of fewer than GROUP_FROM cases is
    split back into single cases, so an ordinary failure reads as before."""
    by_cause: dict[tuple, list[CaseResult]] = {}
    for case in cases:
        by_cause.setdefault((case.outcome, case.level, case.reason, case.diff), []).append(case)
    groups: list[Group] = []
    for members in by_cause.values():
        if len(members) >= GROUP_FROM:
            groups.append(Group(tuple(members)))
        else:
            groups.extend(Group((case,)) for case in members)
    return sorted(groups, key=lambda group: group.first.id)
