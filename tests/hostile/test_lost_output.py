"""Issue 36: a command whose only product is its standard output exits 0 no more when that
output could not be written (`run --list > list.txt` on a full disk left an empty file and
exit 0). A run that wrote its report keeps its verdict (tests/hostile/test_report_files.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAGA = ["--function", "conform.saga", "--input", '{"order": "A-1"}']
COMMANDS = {
    "run --list": ["run", "--list", "-k", "values"],
    "run": ["run", "-k", "values.bytes-empty"],
    "changes": ["changes"],
    "coverage": ["coverage"],
    "simulate": ["simulate", *SAGA],
    "fuzz": ["fuzz", "--examples", "2", "--seed", "1"],
}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_lost_standard_output_is_no_success(command: str) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "fakepeer", *COMMANDS[command]],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "standard output failed" in done.stderr and "Traceback" not in done.stderr
