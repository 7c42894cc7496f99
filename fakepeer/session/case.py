"""Playing one fixture's script against a live SDK session and classifying the outcome.

fail: an expect differs, or a frame violates its schema. error: the SDK crashed, hung, broke
framing, wrote garbage, or answered out of turn; the session is then ended so the next case
gets a fresh process. Every expect is played even after a mismatch, so the conversation stays in
step and the next case is not blamed for this one's leftovers; and when a later case still reads
a late copy of an earlier case's answer, the earlier case is blamed (see `attribution`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence

from fakepeer.cases.model import ExpectStep, Fixture, RawSendStep, SendStep, Step
from fakepeer.cases.variants import FRESH_PROCESS
from fakepeer.compare import MISSING, Comparer, Finding, check_same_as
from fakepeer.protocol import fastpath
from fakepeer.protocol.encode import frame_templates, spelled_as
from fakepeer.protocol.version import BASE_VERSION, is_supported
from fakepeer.session.attribution import blame, owner
from fakepeer.session.effects import (
    TraceProblem,
    check_expected_trace,
    check_invariants,
    trace_events,
)
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CappedFindings, CaseResult
from fakepeer.session.sdk import SdkSession, SessionError, StrayAnswer, decode, late_window
from fakepeer.session.wire import WireLog
from fakepeer.transport.errors import NoAnswer, TransportError, TransportTimeout
from fakepeer.transport.httpauth import CAPABILITY as AUTHENTICATION

#: How a case cut off by --max-time begins its reason (it is then not run: no verdict).
STOPPED = "stopped: the --max-time bound"
#: Time allowed to start an SDK and complete its registration (at least the case timeout).
STARTUP_SECONDS = 10.0

#: Plays a lifecycle fixture's whole run on the model server: (session, fixture, deadline, wire,
#: --max-time deadline) -> the differences from its expectation. The server sits above the
#: session, so the layer that runs cases hands it down (`fakepeer.server.lifecycle.play_lifecycle`
#: through `RunOptions.lifecycle_player` or the pytest plugin); the session never imports it.
LifecyclePlayer = Callable[
    [SdkSession, Fixture, float | None, WireLog | None, float | None], list[Finding]
]


def run_case(
    session: SdkSession,
    fixture: Fixture,
    *,
    timeout: float,
    comparer: Comparer,
    overall_deadline: float | None = None,
    fresh: bool = False,
    startup: float | None = None,
    lifecycle_player: LifecyclePlayer | None = None,
) -> CaseResult:
    """Run one fixture; never raises for SDK misbehaviour (it becomes an `error` result).

    `fresh`: the case is the first a new host process serves, as the `fresh-process` variant
    (`run --isolate`). `lifecycle_player`: plays a lifecycle fixture (required for one: a bench
    that hands none over is miswired, and the case raises rather than pass unplayed).

    If a late answer of an earlier case interrupts this one, that case takes the error and this
    one is played once more on a fresh process, where its own outcome stands.
    """
    if fixture.lifecycle is not None and lifecycle_player is None:
        raise ValueError(f"{fixture.id} is a lifecycle fixture and no lifecycle player was given")
    args = (session, fixture, timeout, comparer, overall_deadline)
    result = _play(*args, True, fresh, startup, lifecycle_player)
    if result is None:
        result = _play(*args, False, fresh, startup, lifecycle_player)
    assert result is not None
    return result


def _play(
    session: SdkSession,
    fixture: Fixture,
    timeout: float,
    comparer: Comparer,
    overall_deadline: float | None,
    may_blame: bool,
    fresh: bool = False,
    startup: float | None = None,
    lifecycle_player: LifecyclePlayer | None = None,
) -> CaseResult | None:
    """Play the script once; None when an earlier case was blamed and this one must be replayed."""
    wire = WireLog()
    start_bound = startup if startup is not None else max(timeout, STARTUP_SECONDS)
    deadline = _clip(wire.started + start_bound, overall_deadline)
    findings = CappedFindings()  # bounded: a huge trace costs no finding per event
    invokes: dict[str, tuple[dict, str | None]] = {}  # exchange id -> (invoke, trace request id)
    trace_problem: str | None = None
    missing_piece: str | None = None
    control: dict[str, str] = {}  # exchange id -> the conform.* kind that opened it
    answers: dict[int, dict] = {}  # step number (1-based) -> the answer it read (`same_as`)
    try:
        if (fresh or fixture.variant == FRESH_PROCESS) and session.transport is not None:
            _check_before_discard(session)
            session.discard()  # the variant: this case is the first a new host process serves
        session.ensure_started(deadline, wire)  # (re)starting does not eat into the case's time
        wire.ready = time.monotonic()
        deadline = _clip(time.monotonic() + timeout, overall_deadline)
        too_new = fixture.needs_newer_version(session.version)
        if too_new:
            return _result(fixture, Outcome.SKIP, wire, reason=too_new)
        missing = fixture.capabilities and fixture.missing_capabilities(
            session.capabilities or frozenset()
        )
        if missing:
            unchecked = unchecked_authentication(session.capabilities or frozenset(), missing)
            return _result(
                fixture,
                Outcome.FAIL if unchecked else Outcome.SKIP,
                wire,
                reason=unchecked
                or f"the SDK does not offer the capabilities: {', '.join(missing)}",
            )
        session.clear_stderr()
        session.reset(deadline, wire)
        if fixture.lifecycle is not None:  # the model server's (run_case checked it was given)
            assert lifecycle_player is not None
            # a restart gets a start's allowance, as between cases, but never past --max-time
            findings.extend(lifecycle_player(session, fixture, deadline, wire, overall_deadline))
        steps = fixture.steps
        referenced = {n for s in steps if isinstance(s, ExpectStep) for _, n, _ in s.same_as}
        for index, step in enumerate(steps):
            if isinstance(step, SendStep):
                kind = step.envelope["kind"]
                if kind == "conform.register":
                    session.registration_dirty = True
                session.send(step.payload, deadline, wire, step.exchange_id)
                if kind.startswith("conform."):
                    control[step.exchange_id] = kind
                if kind == "invoke":
                    # ask for the trace at once when the answer is read next: a host serves
                    # frames in order (§12.1), so this costs no extra round trip
                    answered_next = _answers(steps, index + 1, step.exchange_id)
                    trace_id = _ask_trace(session, deadline, wire) if answered_next else None
                    invokes[step.exchange_id] = (step.envelope, trace_id)
            elif isinstance(step, RawSendStep):
                session.send(step.payload, deadline, wire, step.exchange_id)
            elif isinstance(step, ExpectStep):
                answer, found = _expect(session, step, deadline, wire, comparer)
                if index + 1 in referenced:
                    answers[index + 1] = answer
                if step.same_as:
                    found = [*found, *check_same_as(step.same_as, answer, answers)]
                # later differences may only follow from the first failing step: say so
                after_first = any(not finding.recommended for finding in findings)
                if found:
                    where = f"step {index + 1}, expect {step.kind}"
                    findings.extend(finding.at(where, after_first) for finding in found)
                    if missing_piece is None:
                        missing_piece = unknown_control(control.get(step.exchange_id), step, answer)
                if step.exchange_id in invokes:
                    invoke, trace_id = invokes.pop(step.exchange_id)
                    if trace_id is None:
                        if step.trace is not None and step.trace.after_reset:
                            session.reset(deadline, wire)  # its ack is read before the trace
                        trace_id = _ask_trace(session, deadline, wire)
                    try:
                        events, version = _read_trace(session, step, trace_id, deadline, wire)
                        effects = _effects(step, invoke, answer, events)
                        effects.extend(version)
                        if effects or effects.dropped:
                            where = f"step {index + 1}, expect {step.kind}"
                            findings.extend(finding.at(where, after_first) for finding in effects)
                            findings.dropped += effects.dropped
                    except TraceProblem as exc:
                        trace_problem = trace_problem or str(exc)
                        missing_piece = missing_piece or exc.missing
        _check_nothing_more(session, wire)
    except TransportError as exc:
        reason = _describe(exc, timeout, deadline, overall_deadline)
        reason, stderr = session.end(reason, hung=isinstance(exc, TransportTimeout))
        result = _error(fixture, wire, reason, findings, stderr)
        result.not_run = reason.startswith(STOPPED)  # cut off by the run's bound: no verdict
        return result
    except SessionError as exc:
        reason, stderr = exc.reason, exc.stderr
        if session.transport is not None:  # not ended yet (a start failure ends its process)
            reason, stderr = session.end(reason)
        if may_blame and _blamed_earlier(session, fixture, wire, exc, stderr):
            return None
        return _error(fixture, wire, reason, findings, stderr)
    if trace_problem is not None:
        result = _error(fixture, wire, trace_problem, findings, session.stderr_tail())
    else:
        result = _finished(session, fixture, wire, findings)
    result.missing = missing_piece
    session.note_served(result)
    return result


def _check_before_discard(session: SdkSession) -> None:
    """A frame the host sent unasked before it is discarded is a second answer: its owner's."""
    stray = session.late_frame(late_window(session))
    if stray is not None and session.served:
        earlier = owner(session, stray.ident, ()) or session.served[-1]
        blame(earlier, stray, "before its host was discarded", session.stderr_tail())


def _blamed_earlier(
    session: SdkSession, fixture: Fixture, wire: WireLog, exc: SessionError, stderr: str
) -> bool:
    """Whether `exc` is a stray copy of an earlier case's answer, now that case's error."""
    if not isinstance(exc, StrayAnswer):
        return False
    earlier = owner(session, exc.ident, wire.ids)
    if earlier is None:
        return False
    blame(earlier, exc, f"during case {fixture.id!r}", stderr)
    return True


def _finished(
    session: SdkSession,
    fixture: Fixture,
    wire: WireLog,
    findings: list[Finding],
) -> CaseResult:
    """The result of a script played to its end: pass, or fail with its differences. A case
    whose differences are all in recommended parts passes with them as warnings."""
    if not findings:
        return _result(fixture, Outcome.PASS, wire)
    if fixture.level == "recommended":
        findings = recommended_level(findings, fixture.rule.decision or "")
    kinds = sorted({finding.kind for finding in findings})
    count = f"{len(findings) + _dropped(findings):,}"
    warned = all(finding.recommended for finding in findings)  # a warning, not a failure
    where = " in recommended parts only" if warned else ""
    return _result(
        fixture,
        Outcome.PASS if warned else Outcome.FAIL,
        wire,
        reason=f"{count} difference(s){where}: {', '.join(kinds)}",
        findings=findings,
        stderr=session.stderr_tail(),
    )


def unchecked_authentication(offered: frozenset[str], missing: Sequence[str]) -> str:
    """Why a case about request authentication fails, rather than being skipped, on an HTTP
    endpoint that does not authenticate (D-HTTP-AUTH): no HTTP run is green with authentication
    unchecked. Empty when the case may be skipped (not over HTTP, or it lacks more than that)."""
    if "http" not in offered or list(missing) != [AUTHENTICATION]:
        return ""
    return (
        "the endpoint serves HTTP without request_authentication: an HTTP endpoint must "
        "authenticate every request (D-HTTP-AUTH), so this authentication case fails, never skips"
    )


def recommended_level(findings: Sequence[Finding], rule: str) -> list[Finding]:
    """The findings of a `recommended` fixture: every one a warning (with the fixture's
    decision), but a broken invariant, which RFD 2 demands of every pass whatever the level."""
    result = [f if f.kind == "invariant" else f.as_recommended(rule) for f in findings]
    if isinstance(findings, CappedFindings):
        capped = CappedFindings()
        capped.extend(result)
        capped.dropped += findings.dropped
        return capped
    return result


def _error(
    fixture: Fixture,
    wire: WireLog,
    reason: str,
    findings: list[Finding],
    stderr: str,
) -> CaseResult:
    return _result(
        fixture,
        Outcome.ERROR,
        wire,
        reason=reason,
        findings=findings,
        stderr=stderr,
    )


def _clip(deadline: float, overall_deadline: float | None) -> float:
    return deadline if overall_deadline is None else min(deadline, overall_deadline)


_trace_ids = itertools.count(1)
_TRACE_TEMPLATE = frame_templates("conform.trace")[0]
#: An answer with no events in either usual spelling: a fast path takes its events as `[]`
#: without decoding it (hosts answer most invokes so).
_NO_EVENTS_TEMPLATES = frame_templates("conform.trace", b'{"events":[]}')


def unknown_control(sent: str | None, step: ExpectStep, answer: dict) -> str | None:
    """The control message kind a host does not implement: it answered the bench's `sent`
    with `protocol.unknown_variant` at `/kind` where the fixture expects another answer."""
    if sent is None or step.kind == "protocol_error" or answer.get("kind") != "protocol_error":
        return None
    body = answer.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("category") != "protocol.unknown_variant":
        return None
    details = error.get("details")
    return sent if isinstance(details, dict) and details.get("pointer") == "/kind" else None


def _answers(steps: Sequence[Step], index: int, exchange_id: str) -> bool:
    """Whether step `index` reads the answer on `exchange_id` and its trace may be asked at once
    (not one asked after a reset, which must follow the answer)."""
    if index >= len(steps):
        return False
    step = steps[index]
    return (
        isinstance(step, ExpectStep)
        and step.exchange_id == exchange_id
        and not (step.trace is not None and step.trace.after_reset)
    )


def _ask_trace(session: SdkSession, deadline: float, wire: WireLog) -> str:
    """Queue `conform.trace` (§12.4); the id its answer must carry."""
    ident = f"bench.effects#{next(_trace_ids)}"
    session.send(_TRACE_TEMPLATE % ident.encode("ascii"), deadline, wire, ident)
    return ident


def _read_trace(
    session: SdkSession, step: ExpectStep, trace_id: str, deadline: float, wire: WireLog
) -> tuple[list[dict], list[Finding]]:
    """The host's answer to `conform.trace` `trace_id`: its events and what its envelope gets
    wrong (a `version` this bench does not speak, or none), or TraceProblem."""
    payload = session.receive(deadline, wire)
    if fastpath.enabled() and spelled_as(payload, _NO_EVENTS_TEMPLATES, trace_id):
        return [], []
    reply = decode(payload)
    got = reply.get("id")
    if got == step.exchange_id:  # the invoke answered twice: say so, as at a script's end
        raise StrayAnswer.extra(payload, reply, "after its answer to the invoke")
    if got != trace_id:
        raise StrayAnswer.unexpected(payload, reply, trace_id)
    return trace_events(reply), _version_findings(reply)


def _version_findings(reply: dict) -> list[Finding]:
    """A trace answer names a protocol version of the major the bench speaks, as every frame
    does (docs/protocol.md §2): "9.0" or none is no answer the bench can take as given."""
    if is_supported(reply.get("version")):
        return []
    got = reply.get("version", MISSING)
    return [
        Finding(
            "schema",
            "/version",
            "the conform.trace answer names no protocol version this bench speaks "
            "(RFD 2: \u201cEvery request and response names a protocol version.\u201d)",
            f"{BASE_VERSION[0]}.x",
            got,
        )
    ]


def _effects(step: ExpectStep, invoke: dict, answer: dict, events: list[dict]) -> CappedFindings:
    """Hold one invoke's effect trace against the invariants (§12.4) and the fixture's own."""
    findings = CappedFindings()
    check_invariants(invoke, answer, events, findings)
    if step.trace is not None:
        findings.extend(check_expected_trace(step.trace, events, step.recommend))
    return findings


def _expect(
    session: SdkSession, step: ExpectStep, deadline: float, wire: WireLog, comparer: Comparer
) -> tuple[dict, list[Finding]]:
    payload = session.receive(deadline, wire)
    expected = comparer.spelled_as_expected(step, payload)
    if expected is not None:  # the expected answer byte for byte: nothing to decode or find
        return expected, []
    envelope = decode(payload)
    if envelope.get("id") != step.exchange_id:
        raise StrayAnswer.unexpected(payload, envelope, step.exchange_id, step.kind)
    return envelope, comparer.compare(step, envelope)


def _check_nothing_more(session: SdkSession, wire: WireLog) -> None:
    """A frame already waiting after the script is unsolicited (checked without waiting)."""
    if session.nothing_waiting():
        return
    try:
        payload = session.receive(time.monotonic(), wire)
    except TransportTimeout:
        return
    raise StrayAnswer.extra(payload, decode(payload), "after the script's last step")


def _describe(
    exc: TransportError, timeout: float, deadline: float, overall_deadline: float | None
) -> str:
    if isinstance(exc, NoAnswer):
        return f"{exc.reason}: {exc.detail}"
    if isinstance(exc, TransportTimeout):
        if overall_deadline is not None and deadline >= overall_deadline:
            # the run's bound, not the case's, was in force
            return f"{STOPPED} for the whole run was reached during the case"
        return f"hung: {exc.detail} (case timeout {timeout:g} s)"
    return f"{exc.reason}: {exc.detail}" if exc.detail != exc.reason else exc.reason


def _result(
    fixture: Fixture,
    raw: Outcome,
    wire: WireLog,
    *,
    reason: str = "",
    findings: list[Finding] | None = None,
    stderr: str = "",
) -> CaseResult:
    now = time.monotonic()
    return CaseResult(
        id=fixture.id,
        category=fixture.category,
        level=fixture.level,
        outcome=raw,  # a listed known failure is applied after the run
        raw_outcome=raw,
        duration=now - wire.started,
        pace=now - (wire.ready or wire.started),
        reason=reason,
        findings=list(findings or ()),
        stderr_tail=stderr,
        wire=wire.records,
        started=wire.started,
        exchange_ids=tuple(wire.ids),
        findings_dropped=_dropped(findings),
    )


def _dropped(findings: Sequence[Finding] | None) -> int:
    """The findings a capped list counted but did not keep."""
    return findings.dropped if isinstance(findings, CappedFindings) else 0
