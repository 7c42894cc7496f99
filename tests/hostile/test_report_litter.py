"""Issue 36: a SIGKILL during a report's write left its temporary file beside the report, and
no later run removed it. The next write of the same path removes a dead writer's file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fakepeer import atomic
from tests.hostile.bench_run import write_fixtures

ROOT = Path(__file__).resolve().parents[2]
KILLED_WHILE_WRITING = """
import sys, time
from pathlib import Path
from fakepeer import atomic
with atomic.replacing(Path(sys.argv[1])) as stream:
    stream.write(b'{"half": ')
    stream.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_killed_writers_temporary_file_is_removed_by_the_next_run(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WHILE_WRITING, str(report)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)
    assert len(_litter(tmp_path)) == 1 and not report.exists()
    fixtures = write_fixtures(tmp_path / "fixtures", ("hostile.case-01",))
    done = subprocess.run(
        [
            sys.executable, "-m", "fakepeer", "run", "--fixtures", str(fixtures),
            "--no-default-fixtures", "--sdk", "runners/python/conform",
            "--report-json", str(report),
        ],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert report.exists() and _litter(tmp_path) == []


def test_a_live_writers_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    live = tmp_path / f".report.json.{os.getppid()}.abcdefgh.tmp"  # the parent: alive
    old = tmp_path / ".report.json.abcdefgh.tmp"  # an older bench's naming, an hour old
    recent = tmp_path / ".report.json.ijklmnop.tmp"  # the same, just written
    other = tmp_path / ".other.json.999999999.abcdefgh.tmp"  # another path's
    for file in (live, old, recent, other):
        file.write_text("partial")
    hour_ago = time.time() - atomic.STALE_SECONDS - 60
    os.utime(old, (hour_ago, hour_ago))
    atomic.write_text(path, "whole")
    assert path.read_text() == "whole"
    assert _litter(tmp_path) == sorted(p.name for p in (live, recent, other))
