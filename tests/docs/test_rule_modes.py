"""docs/rule-modes.md maps every rule of protocol §11 to the fixtures that check it in each mode.

The table cannot rot: every fixture it names exists and sends an `invoke` in its column's mode, no
cell is empty, an `n/a` cell gives its reason, and the closing count matches the table.
"""

from __future__ import annotations

import json
import re

import pytest

from fakepeer.cases import repository_root

ROOT = repository_root()
DOC = ROOT / "docs" / "rule-modes.md"
MODES = ("discover", "forward", "compensate")
HEADER = ("rule", "§", "what the rule says", *MODES)
FIXTURE_ID = re.compile(r"`([a-z0-9][a-z0-9_.-]*)`")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _rows() -> list[list[str]]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith("| rule |")]
    assert tuple(_cells(lines[start])) == HEADER
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    return rows


def _invoke_modes() -> dict[str, set[str]]:
    modes: dict[str, set[str]] = {}
    for path in (ROOT / "fixtures").glob("*/*.json"):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        sent = set()
        for step in fixture.get("steps", []):
            send = step.get("send")
            if isinstance(send, dict) and send.get("kind") == "invoke":
                body = send.get("body")
                if isinstance(body, dict) and isinstance(body.get("mode"), str):
                    sent.add(body["mode"])
        modes[fixture["id"]] = sent
    return modes


ROWS = _rows()
INVOKE_MODES = _invoke_modes()


def _ids(cell: str) -> list[str]:
    """The fixture ids of a cell that names fixtures; anything else in it is an error."""
    ids = FIXTURE_ID.findall(cell)
    assert FIXTURE_ID.sub("", cell).replace(",", "").strip() == "", f"stray text in {cell!r}"
    return ids


def test_the_table_has_rules_numbered_in_order_each_citing_section_11() -> None:
    assert ROWS, "docs/rule-modes.md has no table rows"
    assert [row[0] for row in ROWS] == [f"R{n}" for n in range(1, len(ROWS) + 1)]
    for row in ROWS:
        assert len(row) == len(HEADER), row
        assert re.match(r"§11\.[1-5]\b", row[1]), f"{row[0]} cites {row[1]!r}"
        assert row[2], f"{row[0]} says nothing"


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
def test_every_cell_names_fixtures_sending_its_mode_or_says_why_not(row: list[str]) -> None:
    for mode, cell in zip(MODES, row[3:], strict=True):
        where = f"{row[0]} {mode}"
        assert cell, f"{where}: empty cell"
        if cell.startswith("n/a"):
            reason = cell.removeprefix("n/a").lstrip(":").strip()
            assert cell.startswith("n/a: ") and len(reason.split()) >= 3, f"{where}: no reason"
            continue
        ids = _ids(cell)
        assert ids, f"{where}: neither fixture ids nor n/a: {cell!r}"
        for fixture_id in ids:
            assert fixture_id in INVOKE_MODES, f"{where}: no fixture {fixture_id}"
            sent = INVOKE_MODES[fixture_id]
            assert mode in sent, f"{where}: {fixture_id} sends no {mode} invoke ({sorted(sent)})"


def test_the_closing_count_matches_the_table() -> None:
    cells = [cell for row in ROWS for cell in row[3:]]
    na = sum(cell.startswith("n/a") for cell in cells)
    expected = (
        f"{len(ROWS)} rules x {len(MODES)} modes: {len(cells)} cells, "
        f"{len(cells) - na} naming fixtures and {na} `n/a`."
    )
    assert expected in DOC.read_text(encoding="utf-8")
