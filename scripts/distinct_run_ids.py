#!/usr/bin/env python3
"""Give every fixture its own run id: `run-1` becomes `run-<fixture id>` (re-runnable).

Why: when every fixture names the same run, a host that keeps state per run (an answer cache,
a memo of earlier passes) carries it from one case into the next, and a kill that needs a
particular neighbour looks like a kill (issue 20). With a run id per fixture, what one case
leaves behind cannot be mistaken for the next case's run.

The rewrite is textual (`run-1` not followed by an id character, so `run-10` is left alone), and
a formatted fixture is formatted again (as `fixtures fmt`); operation ids built from the run id
(`op:run-1:forward:a`) follow.
Lifecycle scenarios follow too: the model server names a scenario's root run `run-<fixture id>`
(fakepeer/server/lifecycle.py `scenario_run_id`), so the run ids their expectations spell are
rewritten the same way. Fixtures that need `run-1` are listed in KEEP. Running it again changes
nothing.

    python scripts/distinct_run_ids.py [--check]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakepeer.authoring.formatting import format_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
#: Categories whose run ids the bench does not write (none: the model server names a
#: scenario's root run after its fixture).
KEEP_CATEGORIES: frozenset[str] = frozenset()
#: Fixtures that need `run-1` itself, with the reason.
KEEP: dict[str, str] = {}
PATTERN = re.compile(r"run-1(?![0-9A-Za-z_.\-])")


def run_id_of(fixture_id: str) -> str:
    """The run id a fixture's invokes carry."""
    return f"run-{fixture_id}"


def rewritten(path: Path) -> str | None:
    """The file's new text, or None when it keeps its own."""
    text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except ValueError:
        return None
    fixture_id = document.get("id") if isinstance(document, dict) else None
    if not isinstance(fixture_id, str) or fixture_id in KEEP:
        return None
    if document.get("category") in KEEP_CATEGORIES:
        return None
    new = PATTERN.sub(run_id_of(fixture_id), text)
    if new == text:
        return None
    if text == format_text(text):  # a formatted fixture stays formatted (longer lines wrap)
        new = format_text(new)
    return new


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed = []
    for path in sorted(FIXTURES.rglob("*.json")):
        new = rewritten(path)
        if new is None:
            continue
        changed.append(path)
        if not check:
            path.write_text(new, encoding="utf-8")
    verb = "would rewrite" if check else "rewrote"
    print(f"{verb} {len(changed)} fixture file(s)")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
