"""Playing a lifecycle scenario (a `lifecycle` fixture) inside an SDK session, and comparing.

The model server runs the scenario's function to its end against the session's host; the
outcome (status, value or error, compensation order, skipped compensations, other runs, accepted
events) and the ordered invocation lines are compared with the expectation. Every difference is
one Finding; a host that breaks the protocol ends the case as an error (SessionError).
"""

from __future__ import annotations

import copy

from fakepeer.cases.lifecycle import LifecycleSpec
from fakepeer.cases.model import Fixture
from fakepeer.compare import Finding, describe
from fakepeer.protocol.pointer import escape, split
from fakepeer.server.host import HostLink
from fakepeer.server.loop import ModelServer, RunReport
from fakepeer.server.policy import ServerPolicy
from fakepeer.server.script import Fault, ScriptItem
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.wire import WireLog

BASE = "/lifecycle/expect"
#: A scenario is a few dozen invocations; one that needs more has gone wrong (a run that never
#: finishes, e.g. work refused for ever) and is stopped early, so its case fails fast.
SCENARIO_MAX_INVOCATIONS = 1000


def scenario_run_id(fixture_id: str) -> str:
    """The root run id of a scenario: its own, as every fixture's (scripts/distinct_run_ids.py),
    so what a host keeps per run never carries from one scenario into the next."""
    return f"run-{fixture_id}"


def simulate_spec(link: HostLink, spec: LifecycleSpec, root_run_id: str | None = None) -> RunReport:
    """Run the scenario's function with its script and faults on a fresh model server."""
    server = ModelServer(
        link,
        max_invocations=SCENARIO_MAX_INVOCATIONS,
        trace=True,
        policy=ServerPolicy.from_json(spec.policy),
        **({"root_run_id": root_run_id} if root_run_id is not None else {}),
    )
    return play_spec(server, spec)


def play_spec(server: ModelServer, spec: LifecycleSpec) -> RunReport:
    """The scenario's function with its script and faults, played on `server`."""
    return server.simulate(
        spec.function,
        spec.input,
        [ScriptItem.from_json(item) for item in spec.script],
        [Fault.from_json(item) for item in spec.faults],
    )


def play_lifecycle(
    session: SdkSession,
    fixture: Fixture,
    deadline: float | None,
    wire: WireLog | None,
    limit: float | None = None,
) -> list[Finding]:
    """Play `fixture`'s scenario; the differences from its expectation. Nothing, host restarts
    included, runs past `limit`."""
    spec = fixture.lifecycle.expand()  # type: ignore[union-attr]
    assert isinstance(spec, LifecycleSpec)
    link = HostLink(
        session, wire=wire, deadline=deadline, scope=f"{fixture.id}/server", limit=limit
    )
    # a derived variant (fresh-process: the scenario again on a new host) keeps the run id its
    # expectation names; the new host has nothing of the fixture's own case to carry over
    written = fixture.id.removesuffix(f"@{fixture.variant}") if fixture.variant else fixture.id
    report = simulate_spec(link, spec, scenario_run_id(written))
    if report.host_fault is not None:
        raise SessionError(f"during the lifecycle scenario: {report.host_fault}")
    return compare_report(spec.expect, report)


def compare_report(expect: dict, report: RunReport) -> list[Finding]:
    """Each way the report differs from the expectation (docs/fixtures.md)."""
    findings: list[Finding] = []
    outcome = report.outcome()
    vary = [tuple(split(pointer)) for pointer in expect.get("vary", ())]
    for member in ("status", "value", "error"):
        expected = expect.get(member)
        actual = outcome.get(member)
        if member != "status" and expected is None and actual is None:
            continue
        if member == "error" and expected is not None and actual is not None:
            expected, actual = _without(expected, vary, "error"), _without(actual, vary, "error")
        if expected != actual:
            findings.append(
                Finding(
                    "value",
                    f"{BASE}/{member}",
                    f"the run's {member} differs: {describe(expected, actual)}",
                    expected,
                    actual,
                )
            )
    lines = report.timeline.invocation_lines()
    findings.extend(_lines(expect["invocations"], lines, "invocations"))
    findings.extend(_violations(report))
    if "callbacks" in expect:
        findings.extend(_callbacks(expect["callbacks"], report.callbacks()))
    for member in ("compensation", "skipped"):
        expected = expect.get(member, [])
        if expected != outcome[member]:
            findings.append(
                Finding(
                    "value",
                    f"{BASE}/{member}",
                    f"the {member} order differs: {describe(expected, outcome[member])}",
                    expected,
                    outcome[member],
                )
            )
    if "runs" in expect:
        actual_runs = {
            report.aliases[run_id]: run.status
            for run_id, run in report.runs.items()
            if run is not report.root
        }
        if expect["runs"] != actual_runs:
            findings.append(
                Finding(
                    "value",
                    f"{BASE}/runs",
                    f"other runs differ: {describe(expect['runs'], actual_runs)}",
                    expect["runs"],
                    actual_runs,
                )
            )
    if "deadlines" in expect:
        findings.extend(_deadlines(expect["deadlines"], report))
    if "events" in expect:
        names = [event.name for event in report.events]
        if expect["events"] != names:
            findings.append(
                Finding(
                    "value",
                    f"{BASE}/events",
                    f"accepted events differ: {describe(expect['events'], names)}",
                    expect["events"],
                    names,
                )
            )
    return findings


def _deadlines(expected: dict[str, str], report: RunReport) -> list[Finding]:
    """Each named run's resolved deadline, `<virtual ms> <source>` or `none` [S48, S101]."""
    start = report.root.created_ms  # the root run is created when the simulation starts
    actual = {
        report.aliases[run_id]: (
            "none"
            if run.deadline_ms is None
            else f"{run.deadline_ms - start} {run.deadline_source}"
        )
        for run_id, run in report.runs.items()
    }
    findings = []
    for alias in sorted(expected):
        got = actual.get(alias, "(no such run)")
        if expected[alias] != got:
            findings.append(
                Finding(
                    "value",
                    f"{BASE}/deadlines/{escape(alias)}",
                    f"{alias}: deadline {got}, expected {expected[alias]}",
                    expected[alias],
                    got,
                )
            )
    return findings


def _violations(report: RunReport) -> list[Finding]:
    """What the effect traces broke, invocation by invocation (§12.4 invariants)."""
    findings = []
    for index, entry in enumerate(report.timeline.invocations()):
        for message in entry.violations:
            findings.append(
                Finding("invariant", f"/trace/{index}", f"invocation {index + 1}: {message}")
            )
    return findings


def _callbacks(expected: dict[str, int], actual: dict[str, int]) -> list[Finding]:
    """Each callback's start count (from the traces) against the scenario's; a callback the
    scenario does not name must not have started at all."""
    findings = []
    for key in sorted(set(expected) | set(actual)):
        want, got = expected.get(key, 0), actual.get(key, 0)
        if want != got:
            findings.append(
                Finding(
                    "trace",
                    f"{BASE}/callbacks/{escape(key)}",
                    f"{key}: started {got} time(s), expected {want}",
                    want,
                    got,
                )
            )
    return findings


def _lines(expected: list[str], actual: list[str], member: str) -> list[Finding]:
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if want != got:
            return [
                Finding(
                    "value",
                    f"{BASE}/{member}/{index}",
                    f"invocation {index + 1} differs (first difference): {describe(want, got)}",
                    want,
                    got,
                )
            ]
    if len(expected) != len(actual):
        index = min(len(expected), len(actual))
        return [
            Finding(
                "value",
                f"{BASE}/{member}/{index}",
                f"{len(actual)} invocations, expected {len(expected)}",
                expected[index] if index < len(expected) else "(no more)",
                actual[index] if index < len(actual) else "(no more)",
            )
        ]
    return []


def _without(document: object, vary: list[tuple[str, ...]], member: str) -> object:
    """`document` (the outcome's `member`) minus the varied pointers under it."""
    result = copy.deepcopy(document)
    for path in vary:
        if len(path) < 2 or path[0] != member:
            continue
        parent: object = result
        for segment in path[1:-1]:
            parent = parent.get(segment) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return result
