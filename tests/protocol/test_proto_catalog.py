"""One source of truth for message shapes (issue 14.4): the catalog, its schemas, the §14 table.

The catalog (fakepeer/protocol/messages.py: kind, direction, section, value positions;
shapes.py: body shapes) is the source. The schema files are generated from it and the protocol
document's message table must say the same; each failure names what to regenerate or edit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.schema import validate_message
from fakepeer.protocol.schemagen import SCHEMA_DIR, stale_files
from fakepeer.protocol.shapes import COMMON_DEFS

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "docs" / "protocol.md"
ARROWS = {"W→S": "W->S", "S→W": "S->W", "B→H": "B->H", "H→B": "H->B", "both": "both"}
EDIT = (
    "edit whichever is wrong: the catalog (fakepeer/protocol/messages.py, shapes.py) or the "
    "§14 table of docs/protocol.md; then run `python scripts/generate_schemas.py` and "
    "`python scripts/sync_readme.py`"
)


def _table_rows() -> dict[str, tuple[str, str, set[str], set[str]]]:
    """kind -> (direction, section, required members, optional members) from §14's table."""
    text = PROTOCOL.read_text(encoding="utf-8")
    section = text.split("## 14. Message catalog", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        kind, direction, members, number = cells
        required: set[str] = set()
        optional: set[str] = set()
        if "then by status:" in members:
            first, variants = members.split(", then by status:", 1)
            required.add(first.strip())
            optional.update(m.strip() for m in re.split(r"[,/]", variants) if m.strip())
        elif members != "(none)":
            for member in members.split(","):
                member = member.strip()
                if member.startswith("["):
                    optional.add(member.strip("[]"))
                else:
                    required.add(member)
        rows[kind.strip("`")] = (ARROWS.get(direction, direction), number, required, optional)
    return rows


def test_schema_files_are_generated_from_the_catalog() -> None:
    problems = stale_files()
    assert not problems, (
        f"{SCHEMA_DIR}: " + "; ".join(problems) + ". The catalog is the source: run "
        "`python scripts/generate_schemas.py` (never edit the schema files by hand)"
    )


def test_protocol_document_lists_the_catalog_kinds_in_order() -> None:
    rows = _table_rows()
    assert list(rows) == list(KINDS), (
        f"docs/protocol.md §14 lists {list(rows)}, the catalog {list(KINDS)}; {EDIT}"
    )


@pytest.mark.parametrize("name", list(KINDS))
def test_protocol_document_row_matches_the_catalog(name: str) -> None:
    rows = _table_rows()
    assert name in rows, f"docs/protocol.md §14 has no row for {name!r}; {EDIT}"
    direction, section, required, optional = rows[name]
    kind = KINDS[name]
    said = (direction, section, required, optional)
    has = (kind.direction, kind.section, set(kind.required), set(kind.optional))
    assert said == has, (
        f"{name}: docs/protocol.md §14 says (direction, §, required, optional) = {said}, "
        f"the catalog {has}; {EDIT}"
    )


def _value_paths(schema: Any, path: tuple[str, ...], seen: frozenset[str]) -> set[str]:
    """Paths (`a/*/b`) at which a body schema places a tagged value (`$defs/value...`)."""
    found: set[str] = set()
    if not isinstance(schema, dict):
        return found
    ref = schema.get("$ref", "")
    name = ref.rsplit("/", 1)[-1]
    if name in ("value", "bytes_value") or name.startswith("value_"):  # a tagged value (§3)
        return {"/".join(path)}
    if ref:
        if name not in seen:
            found |= _value_paths(COMMON_DEFS[name], path, seen | {name})
    for member, sub in schema.get("properties", {}).items():
        found |= _value_paths(sub, (*path, member), seen)
    if "items" in schema:
        found |= _value_paths(schema["items"], (*path, "*"), seen)
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key, ()):
            found |= _value_paths(branch, path, seen)
            found |= _value_paths(branch.get("then"), path, seen)
    return found


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_has_a_schema_a_valid_example_and_its_value_positions(name: str) -> None:
    kind = KINDS[name]
    assert (SCHEMA_DIR / f"{name}.schema.json").is_file(), "run scripts/generate_schemas.py"
    assert validate_message(kind.example) == [], f"the catalog example of {name} is invalid"
    declared = {re.sub(r"\[[^\]]*\]", "", path) for path in kind.values}
    assert declared == _value_paths(kind.body, (), frozenset()), (
        f"{name}: the catalog's `values` {sorted(declared)} disagree with where its body shape "
        "holds tagged values; edit `values` in fakepeer/protocol/messages.py"
    )
