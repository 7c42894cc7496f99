"""A lifecycle scenario played by a fleet of hosts (`@fleet`, `@rolling`), compared with the
scenario's own expectation.

RFD 2: "every release must interpret durable history using stable function and step
identifiers" and "The protocol outcome is identical and only the language surface differs".
`@fleet` alternates the invocations between the hosts (each on another host than the one before
where routing allows); `@rolling` starts the run on the first host's release and moves it to the
next host's release (which registers while the old one drains) halfway through the scenario's
invocations. The expected outcome, effects and timeline are the scenario's own; each difference
names the invocation, the host that answered it and the hosts whose answers wrote the history it
replayed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from fakepeer.cases.lifecycle import LifecycleSpec
from fakepeer.cases.model import Fixture
from fakepeer.compare import Finding
from fakepeer.server.fleet import FleetLink, FleetServer, Roll, fleet_members
from fakepeer.server.host import HostLink
from fakepeer.server.lifecycle import (
    SCENARIO_MAX_INVOCATIONS,
    compare_report,
    play_spec,
    scenario_run_id,
)
from fakepeer.server.loop import RunReport
from fakepeer.server.policy import ServerPolicy
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.wire import WireLog

#: The derived fleet variants, and the routing each plays with.
FLEET_VARIANTS = {"fleet": "alternate", "rolling": "rolling"}
_INDEXED = re.compile(r"^(/lifecycle/expect/invocations|/trace)/(\d+)$")


def rolling_points(invocations: int, hosts: int) -> list[Roll]:
    """Where `@rolling` moves on: the run's invocations split evenly between the hosts (two
    hosts: halfway)."""
    return [Roll(invocations=max(1, invocations * k // hosts)) for k in range(1, hosts)]


def play_fleet_lifecycle(
    sessions: Sequence[tuple[str, SdkSession]],
    fixture: Fixture,
    deadline: float | None,
    wire: WireLog | None,
    limit: float | None = None,
) -> list[Finding]:
    """Play `fixture` (a lifecycle scenario derived as `@fleet` or `@rolling`) on the fleet of
    `sessions` (label, session); its differences from the scenario's expectation."""
    spec = fixture.lifecycle.expand()  # type: ignore[union-attr]
    assert isinstance(spec, LifecycleSpec) and fixture.variant in FLEET_VARIANTS
    routing = FLEET_VARIANTS[fixture.variant]
    links = [
        HostLink(session, wire=wire, deadline=deadline, scope=f"{fixture.id}/server", limit=limit)
        for _, session in sessions
    ]
    members = fleet_members(links, [label for label, _ in sessions], routing)
    rolls = rolling_points(len(spec.expect["invocations"]), len(members))
    server = FleetServer(
        FleetLink(members),
        routing=routing,
        rolls=rolls if routing == "rolling" else (),
        max_invocations=SCENARIO_MAX_INVOCATIONS,
        trace=True,
        policy=ServerPolicy.from_json(spec.policy),
        root_run_id=scenario_run_id(fixture.id.removesuffix(f"@{fixture.variant}")),
    )
    report = play_spec(server, spec)
    if report.host_fault is not None:
        raise SessionError(f"during the lifecycle scenario on the fleet: {report.host_fault}")
    return [named(finding, report, server) for finding in compare_report(spec.expect, report)]


def named(finding: Finding, report: RunReport, server: FleetServer) -> Finding:
    """`finding` with the invocation it concerns, who answered it and who wrote its history:
    the invocation its pointer indexes, else the root run's last one (whose answer ended it)."""
    invocations = report.timeline.invocations()
    match = _INDEXED.match(finding.pointer)
    index = int(match[2]) if match else None
    if index is None or index >= len(invocations):
        root = report.aliases.get(report.root.run_id)
        mine = [i for i, entry in enumerate(invocations) if entry.run == root]
        index = mine[-1] if mine else None
    if index is None:
        return finding
    served = server.served_by(invocations[index])
    who = served.describe() if served is not None else "redelivered to the host before it"
    return replace(finding, message=f"{finding.message} [fleet: invocation {index + 1}, {who}]")
