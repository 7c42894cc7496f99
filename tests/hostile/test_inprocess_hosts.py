"""Issue 19 items 6, 9 and 10: an in-process host (`--sdk python:...`) runs with the bench's
authority, yet cannot end the bench (status 0, no report), keep it alive for ever, or move its
reports. Each test runs the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.bench_run import write_fixtures

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp: Path, sdk: str, *extra: str, cwd: Path = ROOT, **env: str):
    fixtures = write_fixtures(tmp / "fixtures", ("hostile.case-01", "hostile.case-02"))
    return subprocess.run(
        [
            sys.executable, "-m", "fakepeer", "run", "--sdk", sdk, "--fixtures", str(fixtures),
            "--no-default-fixtures", "--timeout", "10", *extra,
        ],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def test_a_host_exiting_at_import_is_a_usage_error(tmp_path: Path) -> None:
    done = _run(tmp_path, f"python:{ROOT / 'tests' / 'hosts'}:inprocess_exit_at_import:serve")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "it exited (0)" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("function", ["exits", "os_exits"])
def test_a_host_that_exits_cannot_end_the_bench(function: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    sdk = f"python:{ROOT / 'tests' / 'hosts'}:inprocess_hostile:{function}"
    done = _run(tmp_path, sdk, "--report-json", str(report))
    output = done.stdout + done.stderr
    assert report.exists(), output
    assert done.stdout.splitlines()[-1].startswith("0 passed"), output
    assert done.returncode == 1, output


def test_os_exit_on_a_host_thread_ends_that_thread_only(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    sdk = f"python:{ROOT / 'tests' / 'hosts'}:inprocess_hostile:os_exits_on_a_thread_of_its_own"
    done = _run(tmp_path, sdk, "--report-json", str(report))
    output = done.stdout + done.stderr
    assert done.returncode == 0 and report.exists(), output
    assert "called os._exit(0): only that thread ended" in done.stderr
    assert "Traceback" not in output


def test_a_thread_the_host_leaves_does_not_keep_the_bench_alive(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    sdk = f"python:{ROOT / 'tests' / 'hosts'}:inprocess_hostile:leaves_a_thread"
    done = _run(tmp_path, sdk, "--report-json", str(report))  # hung until the timeout before
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left-behind" in done.stderr
    assert json.loads(report.read_text())["summary"]["pass"] == 2


def test_a_host_changing_folder_does_not_move_the_reports(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sdk = f"python:{ROOT / 'tests' / 'hosts'}:inprocess_hostile:changes_folder"
    done = _run(
        tmp_path, sdk, "--report-json", "report.json", "--junit", "junit.xml",
        cwd=tmp_path, RYUSEN_HOSTILE_CHDIR=str(elsewhere),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "report.json").exists() and (tmp_path / "junit.xml").exists()
    assert not list(elsewhere.iterdir())
