"""The late-frame window scales with how fast the host answers, not with how long it took to start.

Why: a window of four times a case's time counted the host's start-up in it, so a one-case run
waited four start-ups (0.8 s) for a late copy instead of the 0.5 s floor (issue 22's fast loop).
"""

from __future__ import annotations

from types import SimpleNamespace

from fakepeer.session.results import CaseResult, Outcome
from fakepeer.session.sdk import LATE_FRAME_MAX_SECONDS, LATE_FRAME_WAIT_SECONDS, late_window


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
