"""`run` with two SDKs: each lifecycle scenario served by the pair (`@fleet`, `@rolling`), and
the pair's publication of the bundled application (`fleet.publication`), reported as an SDK run
of its own that fails the run like any SDK's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakepeer.cases import repository_root
from fakepeer.cli import main

PYTHON = str(repository_root() / "runners" / "python" / "conform")
NODE = str(repository_root() / "runners" / "node" / "conform")


def _run(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "report.json"
    status = main(["run", *args, "--timeout", "30", "--report-json", str(out)])
    return status, json.loads(out.read_text(encoding="utf-8"))


def test_a_pair_serves_every_selected_scenario_as_fleet_and_rolling(tmp_path: Path) -> None:
    status, report = _run(
        tmp_path, "--sdk", PYTHON, "--sdk", NODE, "--variants", "all", "-k", "lifecycle.saga"
    )
    assert status == 0
    labels = [sdk["label"] for sdk in report["sdks"]]
    assert labels == [PYTHON, NODE, "python+node (fleet)"]
    fleet = report["sdks"][2]["cases"]
    scenarios = sorted(c["id"] for c in report["sdks"][0]["cases"] if c["category"] == "lifecycle")
    assert len(scenarios) == 5
    expected = ["fleet.publication"] + [f"{s}@{v}" for s in scenarios for v in ("fleet", "rolling")]
    assert [case["id"] for case in fleet] == expected
    assert all(case["outcome"] == "pass" for case in fleet), [
        (case["id"], case.get("reason")) for case in fleet if case["outcome"] != "pass"
    ]
    assert [pair["label"] for pair in report["fleet"]] == ["python+node (fleet)"]
    merged = tmp_path / "merged.json"  # merge keeps the pair and its fleet section
    assert main(["merge", str(tmp_path / "report.json"), "--report-json", str(merged)]) == 0
    again = json.loads(merged.read_text(encoding="utf-8"))
    assert again["fleet"] == report["fleet"]


def test_one_sdk_runs_no_fleet_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = _run(tmp_path, "--sdk", PYTHON, "--variants", "all", "-k", "saga-completes")
    assert status == 0
    assert [sdk["label"] for sdk in report["sdks"]] == [PYTHON]
    ids = [case["id"] for case in report["sdks"][0]["cases"]]
    assert not [ident for ident in ids if ident.endswith(("@fleet", "@rolling"))]


def test_a_known_failures_list_may_name_a_pair_and_its_cases(tmp_path: Path) -> None:
    """`[A+B (fleet)]` and `SCENARIO@fleet` are a list's label and id like any SDK's: the case a
    fleet mutant fails is an expected failure, and the run exits 0."""
    host = repository_root() / "tests" / "mutants" / "mutant_host.py"
    mutant = f"python3 {host} fleet.journal-over-history"
    case = "lifecycle.saga-charge-answers-lost-compensates-reserve@fleet"
    known = tmp_path / "known.txt"
    known.write_text(f"[fleet.journal-over-history+node (fleet)]\n{case}\n", encoding="utf-8")
    status, report = _run(
        tmp_path,
        *("--sdk", mutant, "--sdk", NODE, "--variants", "fleet"),
        *("-k", case.removesuffix("@fleet"), "--known-failures", str(known)),
    )
    assert status == 0
    outcomes = {c["id"]: c["outcome"] for c in report["sdks"][2]["cases"]}
    assert outcomes == {"fleet.publication": "pass", case: "xfail"}


def test_shards_of_a_fleet_run_merge_with_one_publication(tmp_path: Path) -> None:
    """Only the first shard publishes, so its shards merge (each used to play
    `fleet.publication`, and `merge` refused the second copy)."""
    reports = []
    for index in (1, 2):
        out = tmp_path / f"shard{index}.json"
        args = ["--sdk", PYTHON, "--sdk", NODE, "--variants", "fleet,rolling", "-k", "saga"]
        status = main(["run", *args, "--shard", f"{index}/2", "--report-json", str(out)])
        assert status == 0
        reports.append(str(out))
        (pair,) = [s for s in json.loads(out.read_text())["sdks"] if s["label"].endswith("(fleet)")]
        published = [c for c in pair["cases"] if c["id"] == "fleet.publication"]
        assert len(published) == (1 if index == 1 else 0)
    merged = tmp_path / "merged.json"
    assert main(["merge", *reports, "--report-json", str(merged)]) == 0
    document = json.loads(merged.read_text(encoding="utf-8"))
    (pair,) = document["fleet"]
    assert pair["publication"] == "pass" and len(pair["scenarios"]) == 5
