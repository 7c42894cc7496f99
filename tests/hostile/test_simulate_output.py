"""Issue 36: `simulate --max-time 3` took 16.7 s against a host with admission closed, because
the timeline of the thousands of invocations it was offered was drawn whole (with --max-time 8:
killed at 60 s, nothing printed). The table now shows the first and last rows only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakepeer.server.simulate import SHOWN_ROWS

ROOT = Path(__file__).resolve().parents[2]
HOST = f"{sys.executable} {ROOT / 'tests' / 'hosts' / 'admission_closed_host.py'}"
SAGA = ["--function", "conform.saga", "--input", '{"order": "A-1"}']


def _simulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakepeer", "simulate", "--sdk", HOST, *SAGA, *args],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_long_timeline_is_printed_bounded() -> None:
    done = _simulate("--max-time", "3")
    assert done.returncode == 1, done.stderr
    rows = [  # a row's first line has its time; an answer wrapped onto more lines has none
        line for line in done.stdout.splitlines()
        if line.startswith("│") and line.split("│")[1].strip()
    ]  # fmt: skip
    assert len(rows) <= SHOWN_ROWS + 1, len(rows)
    assert "entries not shown (--json prints every one)" in done.stdout
    # the run's own last line comes after the table: the bound, or (on a fast machine, the run
    # offered every invocation within it) the count of invocations
    last = done.stdout.splitlines()[-1]
    assert "stopped: --max-time of 3 s" in last or last.endswith("events accepted"), last


def test_json_still_holds_every_invocation() -> None:
    done = _simulate("--max-time", "2", "--json")
    document = json.loads(done.stdout)
    invocations = [e for e in document["timeline"] if e.get("kind") != "note"]
    assert len(invocations) == document["invocations"] > SHOWN_ROWS
