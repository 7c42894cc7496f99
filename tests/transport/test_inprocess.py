"""The second transport proves the seam: the same fixtures, run in-process against a Python host.

The bundled Python reference host, served by `conform_host.host:serve` on a thread of the bench,
must pass the whole corpus exactly as it does as a subprocess: nothing but the transport differs.
"""

from __future__ import annotations

import io
import time
from typing import BinaryIO

import pytest

from fakepeer.cases import load_fixtures
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import command_target
from fakepeer.suite import RunOptions, run_suite
from fakepeer.transport import CommandError, InProcessTransport, TransportClosed, TransportTimeout
from fakepeer.transport.inprocess import load_host

REFERENCE = "python:runners/python:conform_host.host:serve"


def test_the_whole_corpus_passes_in_process_against_the_python_reference_host() -> None:
    # the `http` fixtures need the HTTP transport (docs/protocol.md §1.1): skipped in process
    corpus = [f for f in load_fixtures() if "http" not in f.capabilities]
    # lifecycle scenarios restart the host on purpose (faults); every other case shares one host
    exchanges = [f for f in corpus if f.category != "lifecycle"]
    lifecycle = [f for f in corpus if f.category == "lifecycle"]
    for fixtures, one_host in ((exchanges, True), (lifecycle, False)):
        options = RunOptions(timeout=10, lifecycle_player=play_lifecycle)
        result = run_suite([command_target(REFERENCE)], fixtures, options)
        (sdk,) = result.sdks
        assert len(sdk.results) == len(fixtures)
        failing = {r.id: r.reason for r in sdk.results if r.raw_outcome.value != "pass"}
        assert failing == {}
        if one_host:
            assert sdk.starts == 1, "one in-process host served every case"
        assert result.exit_status() == 0


def _echo_one_frame(reader: BinaryIO, writer: BinaryIO) -> int:
    header = reader.read(4)
    payload = reader.read(int.from_bytes(header, "big"))
    writer.write(header + payload)
    writer.flush()
    return 7


def test_frames_flow_both_ways_and_the_return_value_is_the_exit_status() -> None:
    transport = InProcessTransport(_echo_one_frame)
    transport.send(b'{"x":1}')
    assert transport.receive(time.monotonic() + 5) == b'{"x":1}'
    with pytest.raises(TransportClosed, match="returned 7"):
        transport.receive(time.monotonic() + 5)
    assert transport.exit_status() == 7
    transport.close()


def test_a_host_that_raises_is_a_crash_with_its_error_as_stderr() -> None:
    def broken(reader: BinaryIO, writer: BinaryIO) -> int:
        raise RuntimeError("no registry")

    transport = InProcessTransport(broken)
    with pytest.raises(TransportClosed, match="raised RuntimeError: no registry"):
        transport.receive(time.monotonic() + 5)
    assert "no registry" in transport.stderr_tail()
    transport.close()


def test_a_silent_host_times_out_and_close_returns() -> None:
    def silent(reader: BinaryIO, writer: BinaryIO) -> None:
        while reader.read(1):
            pass

    transport = InProcessTransport(silent)
    transport.send(b"{}")
    assert transport.ready() is False
    with pytest.raises(TransportTimeout):
        transport.receive(time.monotonic() + 0.1)
    transport.close(wait=1.0)
    assert transport.exit_status() == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("python:nomodule", "expected python:MODULE:FUNCTION"),
        ("python:no_such_module_here:serve", "cannot import no_such_module_here"),
        ("python:io:no_such_function", "io has no function no_such_function"),
        ("python:/no/such/folder:m:f", "/no/such/folder is not a folder"),
    ],
)
def test_a_bad_python_host_spec_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        command_target(spec)


def test_load_host_finds_the_function() -> None:
    assert load_host("python:io:open") is io.open
