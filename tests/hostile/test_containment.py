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


@linux_only
def test_a_host_being_started_is_no_orphan_when_another_closes_the_last_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two sessions (`--jobs 2`): one closes the last live host just as the other has forked
    its next one, not yet registered as a host. The orphan hunt that closing starts must not
    take the new host (its own session, the bench's child) for a daemon's orphan and SIGKILL it
    mid-handshake ("killed by SIGKILL", seen under load in a reference run)."""
    from fakepeer.transport import process

    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    first = process.SubprocessTransport(sleeper)
    real_popen = subprocess.Popen
    seen: list[set] = []

    def popen_then_close_the_last_host(*args: object, **kwargs: object) -> subprocess.Popen:
        started = real_popen(*args, **kwargs)
        seen.append(set(process._live))
        first.close()  # the other session, between the fork and the registration
        return started

    monkeypatch.setattr(process.subprocess, "Popen", popen_then_close_the_last_host)
    second = process.SubprocessTransport(sleeper)
    try:
        assert seen == [{first}] and containment._subreaper  # the race, really staged
        time.sleep(0.2)
        assert second.process.poll() is None, "the host being started was killed"
    finally:
        second.close()
