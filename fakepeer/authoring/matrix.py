"""`ryusen-conform matrix`: the machine-readable index of every fixture (matrix.json).

RFD 2 calls "the fixtures and the harness's machine-readable matrix" the published schema
surface, so the matrix is generated, sorted and free of timestamps: a stale one is a diff.
"""

from __future__ import annotations

import json
from pathlib import Path

from fakepeer.authoring.docs import load_rfd
from fakepeer.cases import Fixture, load_fixtures, repository_root

MATRIX_FORMAT = "ryusen-conform.matrix/1"


def default_matrix_path() -> Path:
    return repository_root() / "matrix.json"


def _relative(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def entry(fixture: Fixture, root: Path) -> dict:
    """One fixture's row: what it checks, which RFD 2 sentences its quote falls in, where it is."""
    rule = fixture.rule.to_json()
    rule["sentences"] = [
        sentence.number for sentence in load_rfd().sentences_for(fixture.rule.quote)
    ]
    return {
        "id": fixture.id,
        "title": fixture.title,
        "category": fixture.category,
        "level": fixture.level,
        "rule": rule,
        "capabilities": sorted(fixture.capabilities),
        "path": _relative(fixture.path, root),
    }


def build_matrix(fixture_dir: Path | None = None, root: Path | None = None) -> dict:
    """The matrix document for every fixture (raises FixtureError when any does not load)."""
    base = root if root is not None else repository_root()
    fixtures = load_fixtures([fixture_dir if fixture_dir is not None else base / "fixtures"])
    rows = sorted((entry(fixture, base) for fixture in fixtures), key=lambda row: row["id"])
    categories: dict[str, int] = {}
    for row in rows:
        categories[row["category"]] = categories.get(row["category"], 0) + 1
    return {
        "format": MATRIX_FORMAT,
        "count": len(rows),
        "categories": dict(sorted(categories.items())),
        "fixtures": rows,
    }


def render_matrix(matrix: dict) -> str:
    """Stable text: 2-space indent, UTF-8, one trailing newline."""
    return json.dumps(matrix, indent=2, ensure_ascii=False) + "\n"


def stale_reason(path: Path, expected_text: str) -> str | None:
    """None when `path` holds exactly `expected_text`, else why it does not."""
    if not path.is_file():
        return f"{path} does not exist"
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path} cannot be read: {exc}"
    if current == expected_text:
        return None
    try:
        old = {row["id"] for row in json.loads(current).get("fixtures", [])}
    except (ValueError, AttributeError, TypeError, KeyError):
        return f"{path} is not a matrix document"
    new = {row["id"] for row in json.loads(expected_text)["fixtures"]}
    added, removed = sorted(new - old), sorted(old - new)
    parts = []
    if added:
        parts.append(f"missing {len(added)} fixture(s): {', '.join(added[:5])}")
    if removed:
        parts.append(f"lists {len(removed)} removed fixture(s): {', '.join(removed[:5])}")
    return f"{path} is stale" + (": " + "; ".join(parts) if parts else " (fixture details changed)")
