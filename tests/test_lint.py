"""Style is part of the build: ruff must pass on the whole tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tracked_python() -> list[str]:
    """The tree's Python files as git tracks them: a scratch file beside them is no one's build."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--", "*.py", "*.pyi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:  # not a git checkout (an unpacked sdist): the whole tree
        return ["."]
    return [line for line in listed.stdout.splitlines() if (ROOT / line).is_file()]


def test_ruff_check_passes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *_tracked_python()],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *_tracked_python()],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
