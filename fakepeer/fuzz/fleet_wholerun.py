"""Whole runs on a fleet (`fuzz --whole-runs N --sdk A --sdk B ...`): each random run played on
the first SDK alone and on the fleet of every SDK with seeded random routing; a divergence (another
outcome, another invocation timeline, a broken invariant or a host fault on the fleet) is shrunk
to a smaller program and fault list, and its routing seed, that still diverge.

RFD 2: "The protocol outcome is identical and only the language surface differs": a run served by
several SDKs must end as it ends on one.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import typer

from fakepeer.fuzz.wholerun import WholeRun, broken_invariants, play, random_run
from fakepeer.server.fleet import FleetLink, FleetServer, fleet_members
from fakepeer.server.host import HostLink
from fakepeer.server.loop import ModelServer, RunReport
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError

#: Plays a shrinking step may spend on one divergence (each is two whole runs).
SHRINK_PLAYS = 40


def divergence(alone: RunReport, fleet: RunReport, run: WholeRun) -> list[str]:
    """How the fleet's run differs from the run on one SDK (empty: it does not)."""
    found = []
    if fleet.host_fault is not None:
        found.append(f"host-fault on the fleet: {fleet.host_fault}")
    if alone.outcome() != fleet.outcome():
        found.append(f"outcome: alone {alone.outcome()}, fleet {fleet.outcome()}")
    lines, others = alone.timeline.invocation_lines(), fleet.timeline.invocation_lines()
    for index, (want, got) in enumerate(zip(lines, others, strict=False)):
        if want != got:
            found.append(f"invocation {index + 1}: alone {want!r}, fleet {got!r}")
            break
    else:
        if len(lines) != len(others):
            found.append(f"{len(others)} invocations on the fleet, {len(lines)} alone")
    found += [f"fleet {problem}" for problem in broken_invariants(fleet, run)]
    return found


class FleetPlayer:
    """The SDK sessions of one campaign; plays a run alone (first SDK) and on the fleet."""

    def __init__(self, targets: Sequence[SdkTarget], stop_at: float | None) -> None:
        self.targets = list(targets)
        self.sessions = [SdkSession(target.factory) for target in targets]
        self.stop_at = stop_at
        self.plays = 0

    def start(self) -> None:
        for session in self.sessions:
            start_by = time.monotonic() + 30
            session.ensure_started(
                start_by if self.stop_at is None else min(start_by, self.stop_at)
            )

    def shutdown(self) -> None:
        for session in self.sessions:
            session.shutdown()

    def _link(self, session: SdkSession) -> HostLink:
        if session.transport is None:  # a session a fault ended: a new host for the next run
            self.start()
        return HostLink(session, deadline=self.stop_at, limit=self.stop_at)

    def compare(self, run: WholeRun, seed: int) -> tuple[RunReport, list[str]]:
        """The run on the first SDK alone, then on the fleet; each play a run id of its own
        (the same for both, as the values may echo it), on hosts reset first, so nothing a host
        keeps per run or per case carries over."""
        self.plays += 1
        options = {"max_invocations": 300, "keep_frames": True, "trace": True}
        link = self._reset(self.sessions[0])
        alone_server = ModelServer(link, root_run_id=f"run-fuzz-{self.plays}", **options)
        alone = play(link, run, stop_at=self.stop_at, server=alone_server)
        links = [self._reset(session) for session in self.sessions]
        labels = [target.label for target in self.targets]
        server = FleetServer(
            FleetLink(fleet_members(links, labels, "random")),
            routing="random",
            seed=seed,
            root_run_id=f"run-fuzz-{self.plays}",
            **options,
        )
        fleet = play(links[0], run, stop_at=self.stop_at, server=server)
        return fleet, divergence(alone, fleet, run)

    def _reset(self, session: SdkSession) -> HostLink:
        link = self._link(session)
        session.reset(link._deadline())
        return link


def shrink(
    run: WholeRun, seed: int, diverges: Callable[[WholeRun, int], bool]
) -> tuple[WholeRun, int]:
    """Greedily drop faults, server restarts and program operations while the run still
    diverges (within SHRINK_PLAYS plays)."""
    plays = 0

    def smaller(candidate: WholeRun) -> bool:
        nonlocal plays
        plays += 1
        return plays <= SHRINK_PLAYS and diverges(candidate, seed)

    changed = True
    while changed and plays < SHRINK_PLAYS:
        changed = False
        for index in range(len(run.faults)):
            candidate = replace(run, faults=run.faults[:index] + run.faults[index + 1 :])
            if smaller(candidate):
                run, changed = candidate, True
                break
        if not changed and run.restarts and smaller(replace(run, restarts=[])):
            run, changed = replace(run, restarts=[]), True
        ops = run.program["v"]["ops"]["v"]
        for index in range(len(ops) - 1, -1, -1):
            if changed:
                break
            program = json.loads(json.dumps(run.program))
            del program["v"]["ops"]["v"][index]
            candidate = replace(run, program=program)
            if smaller(candidate):
                run, changed = candidate, True
    return run, seed


def run_fleet_whole_runs(
    targets: Sequence[SdkTarget], runs: int, seed: int | None, max_time: float | None
) -> int:
    """Play `runs` random whole runs alone and on the fleet; print each divergence, shrunk."""
    chosen = seed if seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(chosen)
    started = time.monotonic()
    player = FleetPlayer(targets, None if max_time is None else started + max_time)
    bad = judged = 0
    try:
        try:
            player.start()
        except (SessionError, TransportError) as exc:
            typer.echo(f"ryusen-conform: error: cannot start the fleet: {exc}", err=True)
            return 2
        for index in range(runs):
            if player.stop_at is not None and time.monotonic() >= player.stop_at:
                break
            run, routing = random_run(rng), rng.randrange(2**32)
            fleet, found = player.compare(run, routing)
            if fleet.stopped is not None and player.stop_at is not None:
                if time.monotonic() >= player.stop_at:
                    break  # cut short by --max-time: no verdict on this run
            judged += 1
            if not found:
                continue
            bad += 1
            small, _ = shrink(run, routing, lambda r, s: bool(player.compare(r, s)[1]))
            _, still = player.compare(small, routing)
            typer.echo(f"FLEET RUN {index + 1} diverged: {'; '.join(found)}")
            typer.echo(f"  shrunk to: {'; '.join(still or found)}")
            typer.echo(f"  program: {json.dumps(small.program)}")
            typer.echo(f"  faults: {json.dumps(small.faults)}")
            if small.restarts:
                typer.echo(f"  server restarts at (virtual ms): {small.restarts}")
            typer.echo(f"  routing: random, seed {routing}")
    finally:
        player.shutdown()
    names = "+".join(target.label for target in targets)
    typer.echo(
        f"played {judged} whole run(s) alone and on the fleet {names} in "
        f"{time.monotonic() - started:.1f} s, seed {chosen}, {bad} diverged"
    )
    if not judged:
        typer.echo("ryusen-conform: error: no whole run ended: no verdict on the fleet", err=True)
        return 1
    return 1 if bad else 0
