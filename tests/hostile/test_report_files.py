"""Issue 19 item 10: reports go through the path the user named, before the console.

Special files are made in a temporary folder (`mknod`, `mkfifo`, `ln -s`), never the machine's
own `/dev` entries: a device node or FIFO is written through, never replaced by a regular file;
a symbolic link stays a link; a console that fails (a full disk, a closed stdout) costs no report.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.hostile.bench_run import write_fixtures

ROOT = Path(__file__).resolve().parents[2]
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)  # the numbers of /dev/null and /dev/full


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("report-files"), ("hostile.case-01",))


def _run(fixtures: Path, *extra: str, **popen: object) -> subprocess.CompletedProcess:
    argv = [
        sys.executable, "-m", "fakepeer", "run", "--fixtures", str(fixtures),
        "--no-default-fixtures", "--sdk", "runners/python/conform", *extra,
    ]  # fmt: skip
    if "stdout" not in popen:
        popen["capture_output"] = True
    return subprocess.run(argv, cwd=ROOT, timeout=120, check=False, **popen)  # type: ignore[call-overload]


def _node(path: Path, device: int) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, device)
    except PermissionError:
        pytest.skip("making a device node needs root")
    try:  # a folder on a nodev mount refuses to open the node: nothing to test there
        os.close(os.open(path, os.O_WRONLY))
    except OSError as exc:
        if exc.errno != 28:
            pytest.skip(f"device nodes cannot be opened here ({exc})")
    return path


def test_a_device_node_is_written_through_never_replaced(fixtures: Path, tmp_path: Path) -> None:
    node = _node(tmp_path / "null", NULL)
    done = _run(fixtures, "--report-json", str(node))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode), "still the device node"


def test_a_full_device_is_one_line_and_stays_a_device(fixtures: Path, tmp_path: Path) -> None:
    node = _node(tmp_path / "full", FULL)
    done = _run(fixtures, "--report-json", str(node), text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot write the JSON report" in done.stderr and "Traceback" not in done.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    assert "total" in done.stdout, "the run's account is printed all the same"


def test_a_fifo_gets_the_report_and_one_without_reader_is_refused(
    fixtures: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    lonely = _run(fixtures, "--report-json", str(fifo), text=True)
    assert lonely.returncode == 2 and "no process reads" in lonely.stderr, lonely.stderr
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:
            received.append(stream.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    done = _run(fixtures, "--report-json", str(fifo))
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert json.loads(received[0])["summary"]["pass"] == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symbolic_link_is_written_through(fixtures: Path, tmp_path: Path) -> None:
    target = tmp_path / "real" / "report.json"
    target.parent.mkdir()
    link = tmp_path / "link.json"
    link.symlink_to(target)
    done = _run(fixtures, "--report-json", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and json.loads(target.read_text())["summary"]["pass"] == 1


def test_a_console_on_a_full_disk_costs_no_report(fixtures: Path, tmp_path: Path) -> None:
    node = _node(tmp_path / "full", FULL)
    report = tmp_path / "report.json"
    with open(node, "wb") as full:
        done = _run(fixtures, "--report-json", str(report), stdout=full, stderr=subprocess.PIPE)
    stderr = done.stderr.decode()
    assert json.loads(report.read_text())["summary"]["pass"] == 1, stderr
    assert done.returncode == 0, stderr
    assert "standard output failed" in stderr and "Traceback" not in stderr


def test_a_closed_stdout_is_no_traceback(fixtures: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    argv = [
        sys.executable, "-m", "fakepeer", "run", "--fixtures", str(fixtures),
        "--no-default-fixtures", "--sdk", "runners/python/conform", "--report-json", str(report),
    ]  # fmt: skip
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *argv],
        cwd=ROOT, stderr=subprocess.PIPE, timeout=120, check=False,
    )  # fmt: skip
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr, stderr
    assert done.returncode == 0, stderr
    assert json.loads(report.read_text())["summary"]["pass"] == 1
