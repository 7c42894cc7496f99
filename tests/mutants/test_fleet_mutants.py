"""The fleet mutants (`fleet_mutants.py`): each passes its killing scenarios on one SDK and is
killed by them as fleet cases (`SCENARIO@fleet`, the mutant paired with the Node reference SDK),
and the reference pair passes those same fleet cases; FLEET_KILL_MATRIX.md names the same kills.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fakepeer.cases import repository_root
from fakepeer.cli import main

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(repository_root() / "runners" / "python"))

from fleet_mutants import FLEET_KILLS, FLEET_MUTANTS  # noqa: E402

NODE = str(repository_root() / "runners" / "node" / "conform")
PYTHON = str(repository_root() / "runners" / "python" / "conform")


def _run(tmp_path: Path, first: str, ids: list[str]) -> dict:
    listing = tmp_path / "ids.txt"
    listing.write_text("\n".join(sorted({case.rsplit("@", 1)[0] for case in ids})) + "\n")
    out = tmp_path / "report.json"
    main(
        ["run", "--sdk", first, "--sdk", NODE, "--variants", "fleet", "--ids-from", str(listing)]
        + ["--timeout", "30", "--report-json", str(out)]
    )
    return json.loads(out.read_text(encoding="utf-8"))


def _outcomes(sdk: dict) -> dict[str, str]:
    return {case["id"]: case["outcome"] for case in sdk["cases"]}


def test_every_fleet_mutant_has_two_killing_fleet_cases() -> None:
    assert set(FLEET_KILLS) == set(FLEET_MUTANTS)
    assert len(FLEET_MUTANTS) >= 3
    for name, cases in FLEET_KILLS.items():
        assert len(set(cases)) >= 2 and all(case.endswith("@fleet") for case in cases), name


@pytest.mark.parametrize("name", sorted(FLEET_KILLS))
def test_the_mutant_passes_alone_and_its_fleet_cases_kill_it(tmp_path: Path, name: str) -> None:
    killers = list(FLEET_KILLS[name])
    mutant = f"{sys.executable} {HERE / 'mutant_host.py'} {name}"
    report = _run(tmp_path, mutant, killers)
    alone, _, pair = report["sdks"]
    scenarios = {case.rsplit("@", 1)[0] for case in killers}
    assert {i: o for i, o in _outcomes(alone).items() if i in scenarios} == dict.fromkeys(
        scenarios, "pass"
    )
    fleet = _outcomes(pair)
    assert all(fleet[case] in ("fail", "error") for case in killers), fleet


def test_the_reference_pair_passes_every_killing_case(tmp_path: Path) -> None:
    killers = sorted({case for cases in FLEET_KILLS.values() for case in cases})
    report = _run(tmp_path, PYTHON, killers)
    fleet = _outcomes(report["sdks"][2])
    assert all(fleet[case] == "pass" for case in killers), fleet


def test_the_fleet_kill_matrix_names_the_same_kills() -> None:
    text = (HERE / "FLEET_KILL_MATRIX.md").read_text(encoding="utf-8")
    for name, cases in FLEET_KILLS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{name}` |"))
        for case in cases:
            assert f"`{case}`" in row, (name, case)
