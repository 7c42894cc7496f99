"""Issue 36: a FIFO where the bench reads a file whole blocked it for ever (opening a FIFO waits
for a writer): `fixtures prove --kill-matrix FIFO`, a FIFO in place of CHANGELOG.md (`changes`,
`run --since`) or of fixtures/corpus-release.txt (every `run`). Each is now one line or, for the
release record, a corpus without a recorded release."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK = ["--sdk", str(ROOT / "runners" / "python" / "conform")]
#: Far above what each command takes; the old behaviour was to block for ever.
LIMIT = 120


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakepeer", *args],
        cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=LIMIT,
    )  # fmt: skip


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout of its own: the values fixtures, the release record, CHANGELOG.md."""
    root = tmp_path / "checkout"
    (root / "fixtures").mkdir(parents=True)
    shutil.copytree(ROOT / "fixtures" / "values", root / "fixtures" / "values")
    shutil.copy(ROOT / "fixtures" / "corpus-release.txt", root / "fixtures")
    (root / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "rfd-2-execution-protocol.txt", root / "docs")
    shutil.copy(ROOT / "CHANGELOG.md", root)
    return root


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


@pytest.mark.parametrize(
    "command", [["changes"], ["run", "--since", "0.4.0", "-k", "values", *SDK]]
)
def test_a_fifo_changelog_is_one_line(checkout: Path, command: list[str]) -> None:
    _fifo(checkout / "CHANGELOG.md")
    done = _cli("--root", str(checkout), *command)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_release_record_does_not_hang_a_run(checkout: Path) -> None:
    _fifo(checkout / "fixtures" / "corpus-release.txt")
    done = _cli("--root", str(checkout), "run", "-k", "values.bytes-empty", *SDK)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "corpus unreleased" in done.stdout, done.stdout


def test_a_fifo_kill_matrix_is_one_line(tmp_path: Path) -> None:
    matrix = tmp_path / "KILL_MATRIX.md"
    os.mkfifo(matrix)
    done = _cli("fixtures", "prove", "values.bytes-empty", "--kill-matrix", str(matrix))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr
