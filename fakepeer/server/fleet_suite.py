"""Fleet cases of a run with two or more SDKs: every pair of SDKs serves each lifecycle scenario
together (`@fleet`, `@rolling`), and publishes the bundled application (`fleet.publication`).

Each pair is reported as an SDK run of its own, labelled `A+B (fleet)`, so every report, the
exit status and `--maxfail` count its cases as they count any SDK's. The pair's hosts are one
session per SDK, started once and reset before each case; a case that breaks a session (a
crash, a hang, a protocol fault) is that case's error and the next case starts afresh.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from fakepeer.cases.model import Fixture, Rule
from fakepeer.compare import Finding
from fakepeer.protocol.manifest import ManifestStore
from fakepeer.report.fleet import FLEET_SUFFIX, PUBLICATION_ID
from fakepeer.server.fleet import FleetLink, fleet_members, short_label
from fakepeer.server.fleet_lifecycle import FLEET_VARIANTS, play_fleet_lifecycle
from fakepeer.server.host import HostFault, HostLink
from fakepeer.session.case import STARTUP_SECONDS, _error, _finished, _result
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, SdkRun
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.targets import SdkTarget
from fakepeer.session.wire import WireLog
from fakepeer.transport.errors import TransportError

#: The case every pair plays first: both publish the bundled application (RFD 2: "either SDK
#: publishing an unchanged application produces the same bytes and does not create a new
#: generation").
PUBLICATION_RULE = Rule(
    "Manifests",  # RFD 2's sentence, quoted whole below
    "either SDK publishing an unchanged application produces the same bytes and does not "
    "create a new generation",
)


def fleet_label(targets: Sequence[SdkTarget]) -> str:
    return "+".join(short_label(target.label) for target in targets) + FLEET_SUFFIX


def fleet_cases(fixtures: Sequence[Fixture], variants: Sequence[str]) -> list[Fixture]:
    """The lifecycle scenarios of the selection as `@fleet` / `@rolling` cases, in id order."""
    chosen = [name for name in FLEET_VARIANTS if name in variants]
    scenarios = sorted(
        (f for f in fixtures if f.lifecycle is not None and f.variant is None),
        key=lambda fixture: fixture.id,
    )
    return [
        replace(
            fixture,
            id=f"{fixture.id}@{variant}",
            category=f"@{variant}",
            held_steps=fixture.steps,
            source=None,
            variant=variant,
        )
        for fixture in scenarios
        for variant in chosen
    ]


def fleet_names(
    targets: Sequence[SdkTarget], fixtures: Sequence[Fixture], variants: Sequence[str]
) -> tuple[list[str], set[str]]:
    """The labels of the pairs and the ids of their cases, before they run: a known-failures
    list may name them (`[A+B (fleet)]`, `SCENARIO@fleet`)."""
    labels = [fleet_label(pair) for pair in itertools.combinations(targets, 2)]
    return labels, {PUBLICATION_ID} | {case.id for case in fleet_cases(fixtures, variants)}


def run_fleets(
    targets: Sequence[SdkTarget],
    fixtures: Sequence[Fixture],
    variants: Sequence[str],
    *,
    timeout: float,
    overall: float | None,
    validator: Callable | None = None,
    on_result: Callable[[SdkTarget, CaseResult], None] | None = None,
    publish: bool = True,
) -> list[SdkRun]:
    """One SdkRun per pair of targets: the publication case (unless `publish` is false: a shard
    other than the first, so that merged shards hold it once), then every fleet case."""
    cases = fleet_cases(fixtures, variants)
    runs = []
    for pair in itertools.combinations(targets, 2):
        label = fleet_label(pair)
        target = SdkTarget(label, [part for t in pair for part in t.command], pair[0].factory)
        run = SdkRun(label=label, command=list(target.command))
        started = time.monotonic()
        sessions = [(t.label, SdkSession(t.factory, validator)) for t in pair]
        try:
            for fixture in [None, *cases] if publish else cases:
                if overall is not None and time.monotonic() >= overall:
                    result = _stopped(fixture)
                elif fixture is None:
                    result = _publication(sessions, timeout, overall)
                else:
                    result = _fleet_case(sessions, fixture, timeout, overall)
                run.results.append(result)
                if on_result is not None:
                    on_result(target, result)
        finally:
            for _, session in sessions:
                session.shutdown(overall)
        run.duration = time.monotonic() - started
        run.starts = sum(session.starts for _, session in sessions)
        offered = [session.capabilities for _, session in sessions if session.capabilities]
        if len(offered) == len(sessions):  # what the fleet as a whole offers: every host's
            run.capabilities = sorted(frozenset.intersection(*offered))
        runs.append(run)
    return runs


def _publication_fixture() -> Fixture:
    return Fixture(
        id=PUBLICATION_ID,
        title="Every SDK of the pair publishes the application: same bytes, same generation",
        rule=PUBLICATION_RULE,
        category="@fleet",
        level="required",
        capabilities=(),
        held_steps=(),
    )


def _stopped(fixture: Fixture | None) -> CaseResult:
    result = CaseResult(
        id=fixture.id if fixture is not None else PUBLICATION_ID,
        category=fixture.category if fixture is not None else "@fleet",
        level=fixture.level if fixture is not None else "required",
        outcome=Outcome.ERROR,
        raw_outcome=Outcome.ERROR,
        reason="not run: --max-time exceeded",
    )
    result.not_run = True
    return result


def _started(
    sessions: Sequence[tuple[str, SdkSession]], wire: WireLog, overall: float | None
) -> None:
    for _, session in sessions:
        bound = time.monotonic() + STARTUP_SECONDS
        session.ensure_started(bound if overall is None else min(bound, overall), wire)


def _fleet_case(
    sessions: Sequence[tuple[str, SdkSession]],
    fixture: Fixture,
    timeout: float,
    overall: float | None,
) -> CaseResult:
    """One lifecycle scenario on the pair; never raises for an SDK's misbehaviour."""
    wire = WireLog()
    try:
        _started(sessions, wire, overall)
        wire.ready = time.monotonic()
        for label, session in sessions:
            missing = fixture.missing_capabilities(session.capabilities or frozenset())
            if missing:
                reason = (
                    f"{short_label(label)} does not offer the capabilities: {', '.join(missing)}"
                )
                return _result(fixture, Outcome.SKIP, wire, reason=reason)
        deadline = time.monotonic() + timeout
        deadline = deadline if overall is None else min(deadline, overall)
        for _, session in sessions:
            session.clear_stderr()
            session.reset(deadline, wire)
        findings = play_fleet_lifecycle(sessions, fixture, deadline, wire, overall)
    except (TransportError, SessionError) as exc:
        return _broken(sessions, fixture, wire, exc)
    return _finished(sessions[0][1], fixture, wire, findings)


def _broken(
    sessions: Sequence[tuple[str, SdkSession]],
    fixture: Fixture,
    wire: WireLog,
    exc: Exception,
) -> CaseResult:
    """The case's error; every session of the pair starts afresh for the next case."""
    reason = exc.reason if isinstance(exc, SessionError) else str(exc)
    tails = []
    for label, session in sessions:
        tail = session.stderr_tail() if session.transport is not None else ""
        if tail:
            tails.append(f"[{short_label(label)}] {tail}")
        session.discard()
    return _error(fixture, wire, reason, [], "\n".join(tails))


def _publication(
    sessions: Sequence[tuple[str, SdkSession]], timeout: float, overall: float | None
) -> CaseResult:
    """Every SDK of the pair publishes the bundled application into one manifest store: the
    same bytes, and no new generation after the first."""
    fixture = _publication_fixture()
    wire = WireLog()
    try:
        _started(sessions, wire, overall)
        wire.ready = time.monotonic()
        deadline = time.monotonic() + timeout
        deadline = deadline if overall is None else min(deadline, overall)
        links = []
        for _, session in sessions:
            session.reset(deadline, wire)
            links.append(
                HostLink(session, wire=wire, deadline=deadline, scope=PUBLICATION_ID, limit=overall)
            )
        members = fleet_members(links, [label for label, _ in sessions], "alternate")
        try:
            FleetLink(members).publish(ManifestStore())
        except HostFault as exc:
            finding = Finding("value", "/fleet/publication", str(exc))
            return _finished(sessions[0][1], fixture, wire, [finding])
    except (TransportError, SessionError) as exc:
        return _broken(sessions, fixture, wire, exc)
    return _result(fixture, Outcome.PASS, wire)
