"""`fuzz --semantics`: run the campaign, print the counterexample as a draft fixture, one summary.

Exit status: 0 no disagreement, 1 a disagreement (its draft printed, and written under --out),
2 the SDK cannot be started.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from fakepeer.fuzz.semantic_campaign import (
    SemanticResult,
    SemanticSetupError,
    run_semantic_campaign,
)
from fakepeer.session.targets import SdkTarget

DEFAULT_EXAMPLES = 1000


def run_semantics(
    target: SdkTarget,
    examples: int | None,
    seed: int | None,
    out: Path | None,
    timeout: float,
    max_time: float | None,
) -> int:
    """Run one campaign and report it; returns the exit status."""
    try:
        result = run_semantic_campaign(
            target, examples=examples or DEFAULT_EXAMPLES, seed=seed, out=out,
            timeout=timeout, max_time=max_time,
        )  # fmt: skip
    except SemanticSetupError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        return 2
    report(result)
    if result.failure and result.failure.write_error:
        typer.echo(
            f"ryusen-conform: error: the draft fixture: {result.failure.write_error}", err=True
        )
        return 2
    if result.failure:
        return 1
    if result.played == 0:  # cut before its first example: no verdict, so never a pass
        typer.echo(
            f"ryusen-conform: error: no example was played before --max-time: no verdict on "
            f"{result.sdk}",
            err=True,
        )
        return 1
    return 0


def report(result: SemanticResult) -> None:
    """The counterexample (what differs, then the draft fixture), then one summary line."""
    failure = result.failure
    if failure is not None:
        typer.echo(f"DISAGREEMENT after {failure.found_after} example(s): {failure.problem}")
        where = f" (written to {failure.path})" if failure.path else ""
        typer.echo(f"--- draft fixture {failure.draft['id']}.recorded.json{where}")
        typer.echo(json.dumps(failure.draft, indent=2, ensure_ascii=False))
        typer.echo("---")
    bound = " (stopped by --max-time)" if result.timed_out else ""
    typer.echo(
        f"fuzzed {result.sdk} semantics: {result.played} example(s) played{bound}, "
        f"{result.invocations} invocations in {result.seconds:.1f} s ({result.rate:.0f}/s), "
        f"seed {result.seed}, {1 if failure else 0} disagreement(s)"
    )


def run_whole_runs(
    target: SdkTarget, runs: int, seed: int | None, max_time: float | None = None
) -> int:
    """Play `runs` random whole runs on the model server; print each broken invariant. Nothing
    goes past `max_time`: the run it cuts short is not judged, and none judged is no pass."""
    import random
    import time

    from fakepeer.fuzz.wholerun import random_run, run_problems
    from fakepeer.server.host import HostLink
    from fakepeer.session.sdk import SdkSession, SessionError
    from fakepeer.transport.errors import TransportError

    chosen = seed if seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(chosen)
    session = SdkSession(target.factory)
    started = time.monotonic()
    stop_at = None if max_time is None else started + max_time
    bad = judged = 0
    try:
        try:
            start_by = time.monotonic() + 30
            session.ensure_started(start_by if stop_at is None else min(start_by, stop_at))
        except (SessionError, TransportError) as exc:
            typer.echo(f"ryusen-conform: error: cannot start {target.label}: {exc}", err=True)
            return 2
        for index in range(runs):
            if stop_at is not None and time.monotonic() >= stop_at:
                break
            run = random_run(rng)
            report, broken = run_problems(
                HostLink(session, deadline=stop_at, limit=stop_at), run, stop_at
            )
            cut = report.stopped is not None or report.host_fault is not None
            if cut and stop_at is not None and time.monotonic() >= stop_at:
                break  # cut short by --max-time: no verdict on this run
            judged += 1
            if broken:
                bad += 1
                typer.echo(f"RUN {index + 1} broke: {'; '.join(broken)}")
                typer.echo(f"  program: {json.dumps(run.program)}")
                typer.echo(f"  faults: {json.dumps(run.faults)}")
                if run.restarts:
                    typer.echo(f"  server restarts at (virtual ms): {run.restarts}")
                for line in report.timeline.invocation_lines():
                    typer.echo(f"  {line}")
    finally:
        session.shutdown()
    cut = f" (stopped by --max-time after {judged} of {runs})" if judged < runs else ""
    typer.echo(
        f"played {judged} whole run(s){cut} against {target.label} in "
        f"{time.monotonic() - started:.1f} s, seed {chosen}, {bad} broke an invariant"
    )
    if not bad and not judged:
        typer.echo(
            f"ryusen-conform: error: no whole run ended: no verdict on {target.label}", err=True
        )
        return 1
    return 1 if bad else 0
