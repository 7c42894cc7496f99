"""The fixture categories have one list: the fixture schema's enum (plus `lifecycle` from the
lifecycle schema). docs/fixtures.md and the corpus folders must name exactly those."""

from __future__ import annotations

import json
import re

from fakepeer.cases import repository_root

ROOT = repository_root()
CASES = ROOT / "fakepeer" / "cases"


def _schema_categories() -> list[str]:
    fixture = json.loads((CASES / "fixture.schema.json").read_text(encoding="utf-8"))
    lifecycle = json.loads((CASES / "lifecycle.schema.json").read_text(encoding="utf-8"))
    return [
        *fixture["properties"]["category"]["enum"],
        lifecycle["properties"]["category"]["const"],
    ]


def _documented_categories() -> list[str]:
    text = (ROOT / "docs" / "fixtures.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith("| `category` |")]
    description = row.split("|")[2]
    return re.findall(r"`([a-z]+)`", description)


def test_docs_fixtures_md_lists_exactly_the_schema_categories_in_order() -> None:
    assert _documented_categories() == _schema_categories()


def test_every_corpus_folder_is_a_category() -> None:
    folders = {path.name for path in (ROOT / "fixtures").iterdir() if path.is_dir()}
    assert folders <= set(_schema_categories())
