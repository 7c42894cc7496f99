"""The late-frame window scales with how fast the host answers, not with how long it took to start.

Why: a window of four times a case's time counted the host's start-up in it, so a one-case run
waited four start-ups (0.8 s) for a late copy instead of the 0.5 s floor (issue 22's fast loop).
At a session's end the bench sends `conform.shutdown` first and stops listening when the host's
output ends: an exited host writes nothing more, and a one-case run no longer waits the floor.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from types import SimpleNamespace

from fakepeer.session.results import CaseResult, Outcome
from fakepeer.session.sdk import (
    LATE_FRAME_MAX_SECONDS,
    LATE_FRAME_WAIT_SECONDS,
    SdkSession,
    late_window,
)
from fakepeer.transport.errors import TransportClosed
from fakepeer.transport.mock import MockTransport
from fakepeer.transport.process import SubprocessTransport


def _served(duration: float, pace: float) -> CaseResult:
    return CaseResult(
        id="values.x", category="values", level="required", outcome=Outcome.PASS,
        raw_outcome=Outcome.PASS, duration=duration, pace=pace,
    )  # fmt: skip


def test_a_slow_start_does_not_stretch_the_window() -> None:
    session = SimpleNamespace(served=[_served(duration=0.2, pace=0.01)])
    assert late_window(session, at_end=True) == LATE_FRAME_WAIT_SECONDS  # type: ignore[arg-type]


def test_a_slow_host_still_gets_a_longer_window() -> None:
    session = SimpleNamespace(served=[_served(duration=0.5, pace=0.5)])
    assert late_window(session, at_end=True) == 2.0  # type: ignore[arg-type]
    slow = SimpleNamespace(served=[_served(duration=9.0, pace=9.0)])
    assert late_window(slow, at_end=True) == LATE_FRAME_MAX_SECONDS  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the session's end

#: A host that exits as soon as it has read one frame (the bench's `conform.shutdown`).
_EXITS_ON_A_FRAME = (
    "import sys; head = sys.stdin.buffer.read(4); "
    "sys.stdin.buffer.read(int.from_bytes(head, 'big'))"
)


def test_the_end_of_a_session_sends_shutdown_once_and_stops_listening_at_the_hosts_exit() -> None:
    transport = SubprocessTransport([sys.executable, "-c", _EXITS_ON_A_FRAME])
    session = SdkSession(lambda: transport)
    session.transport = transport
    sent: list[bytes] = []
    send = transport.send
    transport.send = lambda payload, deadline=None: (sent.append(payload), send(payload, deadline))
    started = time.monotonic()
    assert session.late_frame(LATE_FRAME_MAX_SECONDS, closing=True) is None
    waited = time.monotonic() - started
    session.shutdown()
    assert [json.loads(payload)["kind"] for payload in sent] == ["conform.shutdown"], sent
    # not the whole 5 s window: the listen ended with the host's output (a loose bound: the
    # host's interpreter has to start and exit within it)
    assert waited < LATE_FRAME_MAX_SECONDS - 1.0, waited


def _ending_session(answers: list[bytes]) -> SdkSession:
    """A session whose host answers `conform.shutdown` with `answers`, then exits."""

    def handler(payload: bytes) -> Iterator[bytes]:
        if json.loads(payload)["kind"] == "conform.shutdown":
            yield from answers
            raise TransportClosed("closed its output")

    transport = MockTransport(handler)
    transport.output_ends_with_host = True
    session = SdkSession(lambda: transport)
    session.transport = transport
    return session


def _frame(ident: str) -> bytes:
    return json.dumps(
        {"version": "1.0", "kind": "completed", "id": ident, "body": {"value": None}}
    ).encode()


def test_an_answer_to_the_shutdown_is_no_case_s_second_answer() -> None:
    assert _ending_session([_frame("bench.shutdown")]).late_frame(1.0, closing=True) is None


def test_a_copy_written_after_the_shutdown_is_a_second_answer() -> None:
    session = _ending_session([_frame("bench.shutdown"), _frame("values.x#1")])
    stray = session.late_frame(1.0, closing=True)
    assert stray is not None and stray.ident == "values.x#1", stray
