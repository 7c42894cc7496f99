"""fakepeer/atomic.py on its own (issue 10, problem 3): a write interrupted or killed midway, or
two writers racing on one path, never leave a torn file or a temporary file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from fakepeer import atomic


def test_an_error_inside_a_streaming_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic.replacing(target) as stream:
        stream.write(b"half of the new")
        raise KeyboardInterrupt  # as a Ctrl-C in the middle of a report
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_process_killed_mid_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    ready = tmp_path / "ready"
    writer = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from fakepeer import atomic
        with atomic.replacing(Path({str(target)!r})) as stream:
            stream.write(b"x" * 1_000_000)
            stream.flush()
            Path({str(ready)!r}).write_text("1")
            time.sleep(60)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", writer])
    try:
        for _ in range(600):
            if ready.exists() or process.poll() is not None:
                break
            threading.Event().wait(0.05)
        assert ready.exists(), "the writer never got going"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert target.read_text() == "old"  # a temporary file may stay after SIGKILL; never a torn one


def test_two_writers_on_one_path_leave_one_whole_version(tmp_path: Path) -> None:
    target = tmp_path / "matrix.json"
    versions = [(f"writer {n}\n" * 20_000).encode() for n in range(2)]
    barrier = threading.Barrier(2)

    def write(data: bytes) -> None:
        barrier.wait()
        for _ in range(20):
            atomic.write_bytes(target, data)

    threads = [threading.Thread(target=write, args=(data,)) for data in versions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in versions
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matrix.json"]
