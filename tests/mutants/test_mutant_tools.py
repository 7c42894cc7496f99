"""The mutant tools answer for themselves: `mutant_host.py --help` and `kill_matrix --only`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_mutant_host_help_lists_the_mutants() -> None:
    done = _run("tests/mutants/mutant_host.py", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: mutant_host.py NAME")
    assert "  replay-reruns-callback: " in done.stdout
    bad = _run("tests/mutants/mutant_host.py", "--bogus")
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_kill_matrix_only_checks_one_mutant_and_writes_nothing() -> None:
    before = (ROOT / "tests" / "mutants" / "KILL_MATRIX.md").read_text(encoding="utf-8")
    done = _run(
        "-m", "tests.mutants.kill_matrix", "--only", "replay-reruns-callback", "-k", "replay."
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay.callback-not-rerun" in done.stdout
    assert (ROOT / "tests" / "mutants" / "KILL_MATRIX.md").read_text(encoding="utf-8") == before
    unknown = _run("-m", "tests.mutants.kill_matrix", "--only", "no-such-mutant")
    assert unknown.returncode == 2 and "unknown mutant" in unknown.stderr
