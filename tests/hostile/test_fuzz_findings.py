"""Issue 36, `fuzz`: `--semantics --max-time` exited 0 after "0 example(s) played" and ran 31 s
past a 3 s bound against a hanging host (the bound was checked only between examples),
`--whole-runs` had no overall bound, and `--out` on a full disk or under a file printed a
traceback and lost the campaign's summary. Each test is the command line a user types."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "hosts"
MUTANT_HOST = ROOT / "tests" / "mutants" / "mutant_host.py"
#: Far above --max-time 3 plus a host's start and kill grace (about 6 s); the old semantics
#: campaign took 16 to 31 s against a hanging host, and a whole-runs campaign had no bound.
HARD_LIMIT = 15


def _fuzz(*args: str, **popen: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakepeer", "fuzz", *args],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=HARD_LIMIT * 4, **popen,  # type: ignore[arg-type]
    )  # fmt: skip


def _host(script: str, *args: str) -> str:
    return " ".join([sys.executable, str(HOSTS / script), *args])


def test_semantics_within_max_time_against_a_hanging_host() -> None:
    began = time.monotonic()
    done = _fuzz("--semantics", "--max-time", "3", "--seed", "1", "--sdk",
                 _host("hang_on_case.py", "fuzz.invoke"))  # fmt: skip
    assert time.monotonic() - began < HARD_LIMIT, "the bound is --max-time, not between examples"
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_semantics_with_no_example_played_is_no_pass() -> None:
    """A host still starting when --max-time passes: nothing was fuzzed, so no verdict."""
    done = _fuzz("--semantics", "--max-time", "2", "--sdk", _host("slow_start_host.py", "6"))
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_whole_runs_within_max_time_against_a_hanging_host() -> None:
    began = time.monotonic()
    done = _fuzz("--whole-runs", "50", "--max-time", "3", "--seed", "1", "--sdk",
                 _host("hang_on_case.py", "server.invoke"))  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no whole run ended: no verdict" in done.stderr
    assert time.monotonic() - began < HARD_LIMIT


def test_whole_runs_max_time_stops_a_long_campaign() -> None:
    done = _fuzz("--whole-runs", "100000", "--max-time", "3", "--seed", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(stopped by --max-time after" in done.stdout.splitlines()[-1]


def test_out_under_a_file_is_refused_before_fuzzing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker, blocker / "drafts"):
        done = _fuzz("--semantics", "--examples", "5", "--out", str(out))
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"--out {out}" in done.stderr and "Traceback" not in done.stderr
        assert "fuzzed" not in done.stdout


def _small_files() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # a disk full after 64 bytes


def test_a_counterexample_that_cannot_be_written_keeps_the_summary(tmp_path: Path) -> None:
    done = _fuzz(
        "--sdk", f"{sys.executable} {MUTANT_HOST} negative-zero-lost", "--examples", "60",
        "--seed", "7", "--out", str(tmp_path), preexec_fn=_small_files,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "COUNTEREXAMPLE (round-trip)" in done.stdout  # printed all the same
    assert done.stdout.splitlines()[-1].startswith("fuzzed "), done.stdout
    assert "cannot write it under" in done.stderr


def test_out_on_a_read_only_mount_is_refused_before_fuzzing(tmp_path: Path) -> None:
    """A private mount namespace (unshare) holds a read-only mount nobody else sees."""
    mount = tmp_path / "ro"
    mount.mkdir()
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o ro tmpfs {mount}"],
        capture_output=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("no private mount namespace here (unshare -m needs root)")
    fuzz = [
        sys.executable, "-m", "fakepeer", "fuzz", "--sdk",
        f"{sys.executable} {MUTANT_HOST} negative-zero-lost", "--examples", "60", "--seed", "7",
        "--out", str(mount / "drafts"),
    ]  # fmt: skip
    script = f'mount -t tmpfs -o ro tmpfs {mount} && exec "$@"'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *fuzz],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=HARD_LIMIT * 4,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"--out {mount / 'drafts'}" in done.stderr and "Traceback" not in done.stderr
