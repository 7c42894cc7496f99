"""Playing one fixture's script against a live SDK session and classifying the outcome.

fail: an expect differs, or a frame violates its schema. error: the SDK crashed, hung, broke
framing, wrote garbage, or answered out of turn; the session is then discarded so the next case
gets a fresh process. Every expect is played even after a mismatch, so the conversation stays in
step and the next case is not blamed for this one's leftovers.
"""

from __future__ import annotations

import time

from fakepeer.cases.model import ExpectStep, Fixture, RawSendStep, SendStep
from fakepeer.compare import Comparer, Finding
from fakepeer.session.outcomes import Outcome, apply_known_failure
from fakepeer.session.results import CaseResult
from fakepeer.session.sdk import SdkSession, SessionError, decode
from fakepeer.session.wire import WireLog
from fakepeer.transport.errors import TransportError, TransportTimeout

#: Time allowed to start an SDK and complete its registration (at least the case timeout).
STARTUP_SECONDS = 10.0


def run_case(
    session: SdkSession,
    fixture: Fixture,
    *,
    timeout: float,
    comparer: Comparer,
    known_failure: bool = False,
    overall_deadline: float | None = None,
) -> CaseResult:
    """Run one fixture; never raises for SDK misbehaviour (it becomes an `error` result)."""
    wire = WireLog()
    deadline = _clip(wire.started + max(timeout, STARTUP_SECONDS), overall_deadline)
    findings: list[Finding] = []
    stderr = ""
    try:
        session.ensure_started(deadline, wire)  # (re)starting does not eat into the case's time
        deadline = _clip(time.monotonic() + timeout, overall_deadline)
        missing = fixture.capabilities and fixture.missing_capabilities(
            session.capabilities or frozenset()
        )
        if missing:
            return _result(
                fixture,
                Outcome.SKIP,
                wire,
                known_failure,
                reason=f"the SDK does not offer the capabilities: {', '.join(missing)}",
            )
        session.clear_stderr()
        session.reset(deadline, wire)
        for step in fixture.steps:
            if isinstance(step, SendStep):
                if step.envelope["kind"] == "conform.register":
                    session.registration_dirty = True
                session.send(step.payload, deadline, wire)
            elif isinstance(step, RawSendStep):
                session.send(step.payload, deadline, wire)
            elif isinstance(step, ExpectStep):
                findings.extend(_expect(session, step, deadline, wire, comparer))
        _check_nothing_more(session, wire)
    except TransportError as exc:
        stderr = session.stderr_tail()
        session.discard()
        reason = _describe(exc, timeout)
        if (
            isinstance(exc, TransportTimeout)
            and overall_deadline is not None
            and deadline >= overall_deadline  # the run's bound, not the case's, was in force
        ):
            reason = "stopped: the --max-time bound for the whole run was reached during the case"
        return _result(
            fixture,
            Outcome.ERROR,
            wire,
            known_failure,
            reason=reason,
            findings=findings,
            stderr=stderr,
        )
    except SessionError as exc:
        stderr = exc.stderr or session.stderr_tail()
        session.discard()
        return _result(
            fixture,
            Outcome.ERROR,
            wire,
            known_failure,
            reason=exc.reason,
            findings=findings,
            stderr=stderr,
        )
    if findings:
        kinds = sorted({finding.kind for finding in findings})
        reason = f"{len(findings)} difference(s): {', '.join(kinds)}"
        return _result(
            fixture,
            Outcome.FAIL,
            wire,
            known_failure,
            reason=reason,
            findings=findings,
            stderr=session.stderr_tail(),
        )
    return _result(fixture, Outcome.PASS, wire, known_failure)


def _clip(deadline: float, overall_deadline: float | None) -> float:
    return deadline if overall_deadline is None else min(deadline, overall_deadline)


def _expect(
    session: SdkSession, step: ExpectStep, deadline: float, wire: WireLog, comparer: Comparer
) -> list[Finding]:
    envelope = decode(session.receive(deadline, wire))
    if envelope.get("id") != step.exchange_id:
        raise SessionError(
            f"answered out of turn: expected a {step.kind!r} frame with id {step.exchange_id!r}, "
            f"got {envelope.get('kind')!r} with id {envelope.get('id')!r}"
        )
    return comparer.compare(step, envelope)


def _check_nothing_more(session: SdkSession, wire: WireLog) -> None:
    """A frame already waiting after the script is unsolicited (checked without waiting)."""
    if session.nothing_waiting():
        return
    try:
        payload = session.receive(time.monotonic(), wire)
    except TransportTimeout:
        return
    envelope = decode(payload)
    raise SessionError(
        f"answered out of turn: an extra {envelope.get('kind')!r} frame with id "
        f"{envelope.get('id')!r} after the script's last step"
    )


def _describe(exc: TransportError, timeout: float) -> str:
    if isinstance(exc, TransportTimeout):
        return f"hung: {exc.detail} (case timeout {timeout:g} s)"
    return f"{exc.reason}: {exc.detail}" if exc.detail != exc.reason else exc.reason


def _result(
    fixture: Fixture,
    raw: Outcome,
    wire: WireLog,
    known_failure: bool,
    *,
    reason: str = "",
    findings: list[Finding] | None = None,
    stderr: str = "",
) -> CaseResult:
    return CaseResult(
        id=fixture.id,
        category=fixture.category,
        level=fixture.level,
        outcome=apply_known_failure(raw, known_failure),
        raw_outcome=raw,
        duration=time.monotonic() - wire.started,
        reason=reason,
        findings=list(findings or ()),
        stderr_tail=stderr,
        wire=wire.records,
    )
