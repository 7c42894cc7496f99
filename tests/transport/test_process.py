"""The subprocess transport against hostile hosts: crash, hang, grandchild, SIGTERM, flood."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from fakepeer.transport import (
    CommandError,
    FrameError,
    SubprocessTransport,
    TransportClosed,
    TransportTimeout,
    parse_command,
)
from tests.support.helpers import HOSTS, host_command


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); look at its state
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_echo_round_trip_and_environment() -> None:
    code = (
        "import os,sys,struct\n"
        "h=sys.stdin.buffer.read(4);p=sys.stdin.buffer.read(struct.unpack('>I',h)[0])\n"
        "r=os.environ['RYUSEN_PYTHON'].encode()\n"
        "sys.stdout.buffer.write(struct.pack('>I',len(r))+r);sys.stdout.buffer.flush()\n"
    )
    transport = SubprocessTransport([sys.executable, "-c", code])
    try:
        transport.send(b"ping", time.monotonic() + 10)
        assert transport.receive(time.monotonic() + 10) == sys.executable.encode()
    finally:
        transport.close()


def test_crash_is_transport_closed_with_exit_status_and_stderr() -> None:
    code = "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"
    transport = SubprocessTransport([sys.executable, "-c", code])
    try:
        with pytest.raises(TransportClosed, match="status 3"):
            transport.receive(time.monotonic() + 10)
        assert "boom" in transport.stderr_tail()
    finally:
        transport.close()


def test_hang_times_out_and_close_kills_the_sleeper() -> None:
    transport = SubprocessTransport(host_command("raw_sigterm_ignorer.py"))
    pid = transport.pid
    with pytest.raises(TransportTimeout):
        transport.receive(time.monotonic() + 0.3)
    transport.close()
    assert transport.process.returncode is not None  # reaped
    assert not _alive(pid)


def test_sigterm_ignored_still_killed() -> None:
    transport = SubprocessTransport(host_command("raw_sigterm_ignorer.py"))
    deadline = time.monotonic() + 10
    while "ignoring SIGTERM" not in transport.stderr_tail() and time.monotonic() < deadline:
        time.sleep(0.02)  # wait until the handler is installed, so the test means something
    transport.close()
    status = transport.exit_status()
    assert status == -9


def test_grandchild_holding_the_pipe_is_killed_with_the_group() -> None:
    transport = SubprocessTransport(host_command("raw_grandchild_holder.py"))
    deadline = time.monotonic() + 10
    match = None
    while match is None and time.monotonic() < deadline:
        match = re.search(r"grandchild (\d+)", transport.stderr_tail())
        time.sleep(0.02)
    assert match, transport.stderr_tail()
    grandchild = int(match.group(1))
    transport.send(b"go", time.monotonic() + 10)
    # the leader exits but the grandchild keeps stdout open: no EOF, so this is a timeout
    with pytest.raises((TransportTimeout, TransportClosed)):
        transport.receive(time.monotonic() + 0.5)
    transport.close()
    assert _wait_gone(grandchild), "the grandchild outlived close()"


def test_stderr_flood_never_blocks_and_keeps_only_the_tail() -> None:
    transport = SubprocessTransport(host_command("raw_stderr_flooder.py"), stderr_capacity=4096)
    try:
        transport.send(b"after the flood", time.monotonic() + 30)
        assert transport.receive(time.monotonic() + 30) == b"after the flood"
        deadline = time.monotonic() + 10
        while "END-OF-FLOOD" not in transport.stderr_tail() and time.monotonic() < deadline:
            time.sleep(0.02)
        tail = transport.stderr_tail()
        assert "END-OF-FLOOD" in tail
        assert transport.stderr.dropped > 4_000_000
        assert len(transport.stderr.getvalue()) <= 4096
        assert tail.startswith("[...")
    finally:
        transport.close()


def test_huge_announced_frame_is_a_frame_error() -> None:
    code = (
        "import sys; sys.stdout.buffer.write(b'\\xff\\xff\\xff\\xff'); "
        "sys.stdout.buffer.flush(); sys.stdin.read()"
    )
    transport = SubprocessTransport([sys.executable, "-c", code])
    try:
        with pytest.raises(FrameError):
            transport.receive(time.monotonic() + 10)
    finally:
        transport.close()


def test_truncated_frame_at_exit_is_reported() -> None:
    code = "import sys; sys.stdout.buffer.write(b'\\x00\\x00\\x00\\x10abc')"
    transport = SubprocessTransport([sys.executable, "-c", code])
    try:
        with pytest.raises(TransportClosed, match="inside a frame"):
            transport.receive(time.monotonic() + 10)
    finally:
        transport.close()


def test_close_is_idempotent() -> None:
    transport = SubprocessTransport(host_command("raw_sigterm_ignorer.py"))
    transport.close()
    transport.close()


def test_parse_command_resolves_relative_paths_and_reports_missing(tmp_path: Path) -> None:
    script = tmp_path / "conform"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert parse_command("./conform --flag 'two words'", tmp_path) == [
        str(tmp_path / "conform"),
        "--flag",
        "two words",
    ]
    with pytest.raises(CommandError, match="does not exist"):
        parse_command("./missing", tmp_path)
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(CommandError, match="not executable"):
        parse_command("./plain", tmp_path)
    with pytest.raises(CommandError, match="not on PATH"):
        parse_command("surely-no-such-program-xyz")
    with pytest.raises(CommandError, match="empty"):
        parse_command("   ")


def test_hosts_folder_exists() -> None:
    assert (HOSTS / "table_host.py").is_file()


def test_sdk_writing_while_we_write_a_big_frame_does_not_deadlock() -> None:
    # The host floods stdout without reading stdin until it has written 4 MiB; we send 4 MiB.
    code = (
        "import sys,struct\n"
        "p=b'x'*(1<<20)\n"
        "for _ in range(4): sys.stdout.buffer.write(struct.pack('>I',len(p))+p)\n"
        "sys.stdout.buffer.flush()\n"
        "h=sys.stdin.buffer.read(4); sys.stdin.buffer.read(struct.unpack('>I',h)[0])\n"
        "sys.stdout.buffer.write(struct.pack('>I',4)+b'done'); sys.stdout.buffer.flush()\n"
    )
    transport = SubprocessTransport([sys.executable, "-c", code])
    try:
        transport.send(b"y" * (4 << 20), time.monotonic() + 60)
        frames = [transport.receive(time.monotonic() + 60) for _ in range(5)]
        assert [len(frame) for frame in frames] == [1 << 20] * 4 + [4]
        assert frames[-1] == b"done"
    finally:
        transport.close()


def test_ready_says_whether_receive_would_return_at_once() -> None:
    echo = Path(__file__).resolve().parents[2] / "bench" / "echo_host.py"
    transport = SubprocessTransport([sys.executable, str(echo)])
    try:
        assert not transport.ready()  # nothing sent, nothing to read
        transport.send_many([b"one", b"two"], time.monotonic() + 10)
        assert transport.receive(time.monotonic() + 10) == b"one"
        deadline = time.monotonic() + 10
        while not transport.ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert transport.receive(time.monotonic()) == b"two"
        assert not transport.ready()
        _close_quietly_input(transport)  # end of input: the echo host exits
        deadline = time.monotonic() + 10
        while not transport.ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(TransportClosed):
            transport.receive(time.monotonic())
    finally:
        transport.close()
    assert transport.ready()  # closed: receive fails at once


def _close_quietly_input(transport: SubprocessTransport) -> None:
    assert transport.process.stdin is not None
    transport.process.stdin.close()
