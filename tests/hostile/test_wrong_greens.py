"""Issue 19: ways a run or a merge exited 0 while a selected case failed or never ran.

One rule for every verdict path: green only when every selected case ran, was compared and
passed, or is a known failure that failed. Each test is the command line a user types.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.hostile.bench_run import host_command, write_fixtures
from tests.support.helpers import run_cli as cli

CASES = tuple(f"hostile.case-{n:02d}" for n in range(1, 5))
FAILING = "hostile.case-03"


def _output(done: subprocess.CompletedProcess) -> str:
    return done.stdout + done.stderr


def _refused(done: subprocess.CompletedProcess, *fragments: str) -> None:
    output = _output(done)
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    for fragment in fragments:
        assert fragment in output, output


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Two shard reports of a run where FAILING crashes the host (so the run fails)."""
    tmp = tmp_path_factory.mktemp("wrong-green-shards")
    fixtures = write_fixtures(tmp / "fixtures", CASES)
    reports = []
    for shard in ("1/2", "2/2"):
        report = tmp / f"shard{shard[0]}.json"
        cli(
            "run", "--fixtures", str(fixtures), "--no-default-fixtures", "--shard", shard,
            "--sdk", host_command("crash_on_case.py", FAILING), "--report-json", str(report),
        )  # fmt: skip
        reports.append(report)
    return tmp, reports


def _holding(reports: list[Path], case_id: str) -> tuple[Path, Path]:
    """(the shard report holding `case_id`, the other one)."""
    first, second = reports
    ids = {case["id"] for case in json.loads(first.read_text())["sdks"][0]["cases"]}
    return (first, second) if case_id in ids else (second, first)


def _edited(source: Path, target: Path, edit) -> Path:
    document = json.loads(source.read_text())
    edit(document)
    target.write_text(json.dumps(document))
    return target


def test_the_complete_merge_fails(shards) -> None:
    tmp, reports = shards
    done = cli("merge", *map(str, reports), "--out", str(tmp / "all.json"))
    assert done.returncode == 1, _output(done)


# ----------------------------------------------------------------------------- 1


def test_merge_refuses_a_report_without_a_selection(shards, tmp_path: Path) -> None:
    """A shard from a bench older than `selection` plus a current one merged green."""
    _, reports = shards
    failing, passing = _holding(reports, FAILING)
    old = _edited(passing, tmp_path / "old.json", lambda d: d.pop("selection"))
    _refused(cli("merge", str(old), str(failing), "--out", str(tmp_path / "m.json")), "selection")
    stripped = _edited(failing, tmp_path / "old2.json", lambda d: d.pop("selection"))
    for extra in ([], ["--allow-partial"], ["--allow-mixed"]):
        done = cli("merge", str(passing), str(stripped), "--out", str(tmp_path / "m.json"), *extra)
        _refused(done, "no selection")


def test_merge_refuses_a_report_holding_a_case_twice(shards, tmp_path: Path) -> None:
    """The failing case replaced by a second copy of a passing one merged as all passed."""
    _, reports = shards
    failing, passing = _holding(reports, FAILING)

    def duplicate(document: dict) -> None:
        cases = document["sdks"][0]["cases"]
        good = next(case for case in cases if case["id"] != FAILING)
        cases[:] = [good if case["id"] == FAILING else case for case in cases]

    edited = _edited(failing, tmp_path / "dup.json", duplicate)
    done = cli("merge", str(passing), str(edited), "--out", str(tmp_path / "m.json"))
    _refused(done, "twice")


def test_merge_refuses_cases_that_do_not_hash_to_the_selection(shards, tmp_path: Path) -> None:
    """The failing case renamed (or replaced by another id): the count holds, the hash does not."""
    _, reports = shards
    failing, passing = _holding(reports, FAILING)

    def rename(document: dict) -> None:
        for case in document["sdks"][0]["cases"]:
            if case["id"] == FAILING:
                case.update(id="hostile.case-99", outcome="pass", raw_outcome="pass")

    edited = _edited(failing, tmp_path / "renamed.json", rename)
    done = cli("merge", str(passing), str(edited), "--out", str(tmp_path / "m.json"))
    _refused(done, "do not hash to the selection")


def test_a_partial_merge_is_never_green(shards, tmp_path: Path) -> None:
    _, reports = shards
    _, passing = _holding(reports, FAILING)
    done = cli("merge", str(passing), "--out", str(tmp_path / "m.json"), "--allow-partial")
    assert done.returncode == 1, _output(done)
    assert "in no report" in _output(done)


# ----------------------------------------------------------------------------- 7


def test_merge_refuses_shards_of_different_lenience(shards, tmp_path: Path) -> None:
    """One --lenient shard made the whole merge lenient, so another shard's xpass merged green."""
    _, reports = shards
    failing, passing = _holding(reports, FAILING)
    lenient = _edited(passing, tmp_path / "lenient.json", lambda d: d.update(lenient=True))
    done = cli("merge", str(lenient), str(failing), "--out", str(tmp_path / "m.json"))
    _refused(done, "--lenient")
    strict = _edited(passing, tmp_path / "strict.json", lambda d: d.update(strict=True))
    _refused(cli("merge", str(strict), str(failing), "--out", str(tmp_path / "m.json")), "--strict")


# ----------------------------------------------------------------------------- 2


@pytest.mark.parametrize("selection", [["-k", "replay-typo-xyz"], ["--category", "valuez"]])
def test_an_empty_selection_is_refused_with_a_shard(selection: list[str], tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "fixtures", CASES[:2])
    for shard in ([], ["--shard", "1/2"], ["--shard", "2/2"]):
        done = cli(
            "run", "--fixtures", str(fixtures), "--no-default-fixtures", *selection, *shard,
            "--sdk", "runners/python/conform",
        )  # fmt: skip
        _refused(done, "no fixture matches the selection")


# ----------------------------------------------------------------------------- 3


def test_cases_cut_off_by_max_time_are_never_failures(tmp_path: Path) -> None:
    """--max-time's cases became failures, a written list held them, and its next run was green."""
    fixtures = write_fixtures(tmp_path / "fixtures", CASES)
    listed = tmp_path / "known.txt"
    report = tmp_path / "report.json"
    done = cli(
        "run", "--fixtures", str(fixtures), "--no-default-fixtures", "--timeout", "30",
        "--max-time", "3", "--sdk", host_command("hang_on_case.py", CASES[1]),
        "--write-failures", str(listed), "--report-json", str(report),
    )  # fmt: skip
    assert done.returncode == 1, _output(done)
    assert "not run (--max-time reached)" in _output(done)
    cases = {case["id"]: case for case in json.loads(report.read_text())["sdks"][0]["cases"]}
    assert cases[CASES[0]]["outcome"] == "pass"
    assert all(cases[ident].get("not_run") for ident in CASES[1:]), cases
    assert not [line for line in listed.read_text().splitlines() if not line.startswith("#")]
    # a list naming them all does not make the cut-off cases known failures either
    listed.write_text("\n".join(CASES[1:]) + "\n")
    done = cli(
        "run", "--fixtures", str(fixtures), "--no-default-fixtures", "--timeout", "30",
        "--max-time", "3", "--sdk", host_command("hang_on_case.py", CASES[1]),
        "--known-failures", str(listed), "--report-json", str(report),
    )  # fmt: skip
    assert done.returncode == 1, _output(done)
    outcomes = {
        case["id"]: case["outcome"] for case in json.loads(report.read_text())["sdks"][0]["cases"]
    }
    assert "xfail" not in outcomes.values(), outcomes
