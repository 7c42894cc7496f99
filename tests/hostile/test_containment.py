"""Process containment (issue 19 item 12): a double-forked `setsid env -i` daemon started by a
host does not survive the run (the bench is a child subreaper and kills the orphans re-parented
to it), and a host dies with a SIGKILLed bench (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakepeer.cases.loader import repository_root
from fakepeer.transport import containment

from .bench_run import CASES, host_command, run_bench, write_fixtures

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(path: Path, seconds: float = 30.0) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return int(path.read_text().strip())


def _gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:  # never leave it behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    return not alive


@linux_only
def test_a_double_forked_setsid_env_i_daemon_does_not_survive_the_run(tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "fixtures")
    pidfile = tmp_path / "daemon.pid"
    run = run_bench(host_command("daemon_on_case.py", CASES[2], pidfile), fixtures, tmp_path, 10.0)
    assert run.status == 0, run.output
    daemon = _wait_for(pidfile, 1.0)
    assert _gone(daemon, 1.0), f"the daemon {daemon} outlived the run"


@linux_only
def test_a_hanging_host_dies_with_a_sigkilled_bench(tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "fixtures")
    pidfile = tmp_path / "host.pid"
    argv = [
        sys.executable, "-m", "fakepeer", "run", "--sdk", host_command("hang_forever.py", pidfile),
        "--fixtures", str(fixtures), "--no-default-fixtures", "--timeout", "60",
    ]  # fmt: skip
    bench = subprocess.Popen(
        argv, cwd=repository_root(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        host = _wait_for(pidfile)
    finally:
        bench.kill()
        bench.wait()
    assert _gone(host), f"the host {host} outlived the SIGKILLed bench"


def test_without_prctl_containment_degrades_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(containment, "_prctl", lambda: None)
    monkeypatch.setattr(containment, "_tried", False)
    monkeypatch.setattr(containment, "_subreaper", False)
    monkeypatch.setattr(containment, "_warned", False)
    containment.become_subreaper()
    assert containment.death_signal() is None
    assert containment.orphans() == set()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "prctl" in lines[0] and "Traceback" not in lines[0], lines
