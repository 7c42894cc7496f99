"""What an `error` row carries: the host's last stderr lines, and its own exit status.

Why: the row is all an SDK author gets. The stderr tail must hold what the host wrote just
before misbehaving (even when the drain thread lags), rows after the SDK is given up keep the
last start's tail, and a hang of a host that already exited says so (something holds its output).
"""

from __future__ import annotations

import sys
import time

import pytest

from fakepeer.compare import Comparer
from fakepeer.session import Outcome, SdkSession, run_case
from fakepeer.session.sdk import with_note
from fakepeer.transport import MockTransport, SubprocessTransport
from fakepeer.transport.process import describe_exit
from tests.support.helpers import echo_scenario, host_command
from tests.support.mock_sdk import MockSdk


class LaggingTransport(SubprocessTransport):
    """A subprocess whose stderr drain does not run before `close`: a thread not yet woken."""

    def _drain_stderr(self) -> None:
        self._stop_stderr.wait(60)
        super()._drain_stderr()


def _run(session: SdkSession, run_id: str, fixture_id: str | None = None):
    fixture = echo_scenario(run_id, fixture_id=fixture_id).build()
    return run_case(session, fixture, timeout=10.0, comparer=Comparer())


@pytest.mark.parametrize(
    ("run_id", "reason"),
    [("garbage", "wrote garbage"), ("wrong-id", "out of turn"), ("huge-frame", "broke framing")],
)
def test_the_row_keeps_what_a_live_host_wrote_just_before_misbehaving(
    run_id: str, reason: str
) -> None:
    session = SdkSession(lambda: LaggingTransport(host_command("table_host.py")))
    try:
        result = _run(session, run_id)
    finally:
        session.discard()
    assert result.outcome is Outcome.ERROR
    assert reason in result.reason, result.reason
    assert f"about to answer t.{run_id}#1 with {run_id}" in result.stderr_tail


def test_close_reads_what_the_stderr_pipe_still_holds() -> None:
    code = (
        "import os, sys, time\n"
        "os.write(2, b'last words\\n'); os.write(1, b'\\x00\\x00\\x00\\x02ok')\n"
        "time.sleep(60)\n"
    )
    transport = LaggingTransport([sys.executable, "-c", code])
    assert transport.receive(time.monotonic() + 10) == b"ok"
    assert transport.stderr_tail() == "", "the drain has not run: the old order lost this"
    transport.close()
    assert transport.stderr_tail() == "last words\n"


def test_discard_returns_the_stderr_tail() -> None:
    session = SdkSession(MockSdk().factory)
    transport = session.ensure_started(None)
    assert isinstance(transport, MockTransport)
    transport.write_stderr("bye\n")
    assert session.discard() == "bye\n"
    assert session.discard() == ""


def test_rows_after_the_sdk_is_given_up_keep_the_last_starts_stderr_and_status() -> None:
    sdk = MockSdk(registration="refused")

    def factory() -> MockTransport:
        transport = sdk.factory()
        transport.write_stderr(f"mock: start {sdk.starts} cannot register\n")
        transport.exited = 4  # it refused, then exited on its own
        return transport

    session = SdkSession(factory)
    results = [_run(session, "ok", f"t.ok{n}") for n in range(4)]
    assert [r.outcome for r in results] == [Outcome.ERROR] * 4
    assert sdk.starts == 2
    assert "start 1 cannot register" in results[0].stderr_tail
    for result in results[1:]:
        assert "start 2 cannot register" in result.stderr_tail, result
        assert "the host process itself had already exited with status 4" in result.reason
    assert results[-1].reason.endswith("(2 attempts in a row)")


def test_a_hang_of_a_host_that_already_exited_names_its_exit_status() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    transport = session.ensure_started(None)
    assert isinstance(transport, MockTransport)
    transport.exited = 5  # gone, yet no end of file: a child of it holds the output
    result = _run(session, "hang")
    assert result.outcome is Outcome.ERROR
    assert result.reason.startswith("hung: sent no complete frame")
    assert "the host process itself had already exited with status 5" in result.reason
    assert "pipes stayed open" in result.reason


def test_a_live_hang_says_nothing_about_an_exit() -> None:
    result = _run(SdkSession(MockSdk().factory), "hang")
    assert "the host process itself" not in result.reason


def test_a_crash_names_its_exit_status_once() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    transport = session.ensure_started(None)
    assert isinstance(transport, MockTransport)
    transport.exited = 3
    result = _run(session, "crash")
    assert result.reason.count("exited with status 3") == 1, result.reason
    assert "mock: crashing" in result.stderr_tail


def test_exit_note_wording() -> None:
    assert with_note("hung", describe_exit(None)) == "hung"
    note = describe_exit(2)
    assert with_note("closed; exited with status 2", note) == "closed; exited with status 2"
    assert with_note("wrote garbage", describe_exit(-11)) == (
        "wrote garbage; the host process itself had already been killed by SIGSEGV"
    )
    assert with_note("hung", describe_exit(0, hung=True)).startswith(
        "hung; the host process itself had already exited with status 0, but its pipes"
    )
