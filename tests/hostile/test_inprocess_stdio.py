"""Issue 36: an in-process host that closed `sys.stdout` and `sys.stderr` gave a fatal dump
("lost sys.stderr") and no JSON report. The bench's own streams outlive it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hostile.bench_run import write_fixtures

ROOT = Path(__file__).resolve().parents[2]


def test_a_host_closing_the_standard_streams_costs_nothing(tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "fixtures", ("hostile.case-01", "hostile.case-02"))
    report = tmp_path / "report.json"
    sdk = f"python:{ROOT / 'tests' / 'hosts'}:inprocess_hostile:closes_stdio"
    done = subprocess.run(
        [
            sys.executable, "-m", "fakepeer", "run", "--sdk", sdk, "--fixtures", str(fixtures),
            "--no-default-fixtures", "--report-json", str(report),
        ],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert json.loads(report.read_text())["summary"]["pass"] == 2
    assert done.stdout.splitlines()[-1] == "2 passed, 0 failed", output
    assert "Fatal" not in output and "Traceback" not in output
