#!/usr/bin/env python3
"""List every fixture with its level, decision and quote, and flag levels off the stated rule.

Why: docs/fixtures.md ("Levels") says when a fixture is `required` and when `recommended`, and
that a fixture whose quote does not itself demand its expectation names its `rule.decision`.
Reviewing a corpus of hundreds of fixtures by hand needs them side by side, category by
category, with what a machine can check pointed out:

- `recommended` without a decision (recommended means RFD 2 alone does not settle it, so some
  decision must be what the fixture rests on);
- a level that disagrees with its decision's own entry in docs/decisions.md, where the entry says
  "the fixtures are `recommended`" or "`required`";
- one decision whose fixtures carry both levels (each such fixture needs a reason in its notes).

    python scripts/level_review.py [--category NAME] [--flagged] [--decision D-NAME]

Prints `id  level  decision  quote…`, grouped by category, flags marked `!`; exits 0 (it is a
review aid, not a gate: `fixtures validate` is the gate).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_HEADING = re.compile(r"^## (D-[A-Z0-9-]+)\s*$")


def decision_levels(path: Path) -> dict[str, str]:
    """Decision id -> the level its entry says its fixtures have, where it says one."""
    levels: dict[str, str] = {}
    current = None
    text: dict[str, list[str]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _HEADING.match(line)
        if match:
            current = match[1]
        elif line.startswith("## "):
            current = None
        elif current:
            text[current].append(line)
    for ident, lines in text.items():
        body = " ".join(lines)
        said = re.findall(r"fixtures are\s+`(required|recommended)`", body)
        if len(set(said)) == 1:
            levels[ident] = said[0]
    return levels


def load(root: Path) -> list[dict]:
    fixtures = []
    for path in sorted((root / "fixtures").rglob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(document, dict) and "id" in document and "level" in document:
            fixtures.append(document)
    return fixtures


def decisions_of(fixture: dict) -> list[str]:
    decision = (fixture.get("rule") or {}).get("decision") or ""
    return re.findall(r"D-[A-Z0-9-]+", decision)


def flags(fixtures: list[dict], said: dict[str, str]) -> dict[str, list[str]]:
    """Fixture id -> the reasons its level looks off the rule."""
    found: dict[str, list[str]] = defaultdict(list)
    by_decision: dict[str, set[str]] = defaultdict(set)
    for fixture in fixtures:
        for decision in decisions_of(fixture):
            by_decision[decision].add(fixture["level"])
    for fixture in fixtures:
        ident, level, decisions = fixture["id"], fixture["level"], decisions_of(fixture)
        if level == "recommended" and not decisions:
            found[ident].append("recommended without a rule.decision")
        for decision in decisions:
            if decision in said and said[decision] != level:
                found[ident].append(f"{decision} says its fixtures are {said[decision]}")
            if len(by_decision[decision]) > 1:
                found[ident].append(f"{decision} has fixtures of both levels")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", help="only this category")
    parser.add_argument("--decision", help="only fixtures naming this decision")
    parser.add_argument("--flagged", action="store_true", help="only flagged fixtures")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    fixtures = load(args.root)
    found = flags(fixtures, decision_levels(args.root / "docs" / "decisions.md"))
    shown = 0
    categories: dict[str, list[dict]] = defaultdict(list)
    for fixture in fixtures:
        categories[fixture.get("category", "?")].append(fixture)
    for category in sorted(categories):
        if args.category and category != args.category:
            continue
        rows = []
        for fixture in categories[category]:
            ident = fixture["id"]
            if args.flagged and ident not in found:
                continue
            if args.decision and args.decision not in decisions_of(fixture):
                continue
            rule = fixture.get("rule") or {}
            mark = "!" if ident in found else " "
            quote = (rule.get("quote") or "")[:90]
            rows.append(
                f"{mark} {ident:60} {fixture['level']:11} {rule.get('decision') or '-':28} {quote}"
            )
            rows.extend(f"      ! {reason}" for reason in found.get(ident, []))
        if rows:
            print(f"## {category}")
            print("\n".join(rows))
            shown += sum(1 for row in rows if not row.startswith("      "))
    total = len(fixtures)
    required = sum(1 for f in fixtures if f["level"] == "required")
    named = sum(1 for f in fixtures if decisions_of(f))
    print(
        f"\n{shown} shown of {total} fixtures: {required} required, {total - required} "
        f"recommended, {named} name a decision; {len(found)} flagged",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
