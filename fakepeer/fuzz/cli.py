"""The `fuzz` command; `register_commands(app)` mounts it on the main `ryusen-conform` CLI.

Exit status: 0 when no counterexample was found, 1 when one was (each printed as a fixture
file), 2 when an SDK cannot be started or the command line is wrong. `--sdk` is repeatable, as
for `run`: each SDK gets the same campaign (one seed for all), a section of its own and a
result line at the end; the status is the worst of theirs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fakepeer import atomic
from fakepeer.session.targets import SdkTarget, targets_from_options
from fakepeer.transport.process import CommandError

if TYPE_CHECKING:
    from fakepeer.fuzz.campaign import CampaignResult

ECHO_EXAMPLES = 100


def fuzz(
    sdk: Annotated[
        list[str] | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host (repeatable: each SDK gets the same "
            "campaign and a result of its own). Default: the bundled Python reference SDK.",
            metavar="CMD",
        ),
    ] = None,
    examples: Annotated[
        int | None,
        typer.Option(
            "--examples",
            min=1,
            help="Examples per property (round trip, refusal; default 100), or with --semantics "
            "the cases to play (default 1000).",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Random seed (printed; reuse it to reproduce).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write counterexample fixtures to OUT/values/<id>.json."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Seconds allowed per echo.")
    ] = 5.0,
    semantics: Annotated[
        bool,
        typer.Option(
            "--semantics",
            help="Fuzz invocation semantics instead: generated programs, histories, modes and "
            "targets, each held to the oracle (answer and effect trace). Default examples: 1000.",
        ),
    ] = False,
    whole_runs: Annotated[
        int | None,
        typer.Option(
            "--whole-runs",
            min=1,
            help="Play this many random programs to their end on the model server with random "
            "faults, holding run-wide invariants (callbacks once per attempt, exact unwind, one "
            "receipt per emission, history only grows, the run ends).",
        ),
    ] = None,
    max_time: Annotated[
        float | None,
        typer.Option(
            "--max-time",
            help="With --semantics or --whole-runs: stop playing after this many seconds (the "
            "example or run it cuts short is not judged; none judged is no pass).",
        ),
    ] = None,
) -> None:
    """Fuzz an SDK: its value codec through conform.echo, or (--semantics) its replay semantics."""
    if max_time is not None and not semantics and whole_runs is None:
        _usage("--max-time bounds a --semantics or --whole-runs campaign; add one")
    if max_time is not None and not max_time > 0:
        _usage(f"--max-time must be a positive number of seconds, not {max_time:g}")
    try:
        targets = targets_from_options(sdk)
    except CommandError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    if whole_runs is not None and semantics:
        _usage("--whole-runs and --semantics are two campaigns; run them one at a time")
    if out is not None:
        _check_out(out)
    if len(targets) > 1 and seed is None:
        seed = random.SystemRandom().randrange(2**32)  # one seed: every SDK gets the same cases

    def out_for(target: SdkTarget) -> Path | None:
        if out is None or len(targets) == 1:
            return out
        return out / (re.sub(r"[^A-Za-z0-9._-]+", "-", target.label).strip("-") or "sdk")

    if whole_runs is not None:
        from fakepeer.fuzz.semantic_cli import run_whole_runs

        code = _each(targets, lambda t: run_whole_runs(t, whole_runs, seed, max_time))
        if len(targets) > 1:  # and the same runs on the fleet of them all, random routing
            from fakepeer.fuzz.fleet_wholerun import run_fleet_whole_runs

            typer.echo(f"=== fleet of {len(targets)} SDKs")
            code = max(code, run_fleet_whole_runs(targets, whole_runs, seed, max_time))
        raise typer.Exit(code)
    if semantics:
        from fakepeer.fuzz.semantic_cli import run_semantics

        raise typer.Exit(
            _each(
                targets,
                lambda t: run_semantics(t, examples, seed, out_for(t), timeout, max_time),
            )
        )
    raise typer.Exit(_each(targets, lambda t: _run_echo(t, examples, seed, out_for(t), timeout)))


OUTCOME = {0: "no counterexample", 1: "COUNTEREXAMPLE FOUND", 2: "ERROR: could not be fuzzed"}


def _each(targets: list[SdkTarget], play: Callable[[SdkTarget], int]) -> int:
    """Play the campaign against each SDK in turn; with several, a header before each and one
    result line per SDK at the end. The worst status wins (2 over 1 over 0)."""
    if len(targets) == 1:
        return play(targets[0])
    codes = []
    for target in targets:
        typer.echo(f"=== {target.label}")
        codes.append(play(target))
    for target, code in zip(targets, codes, strict=True):
        typer.echo(f"{target.label}: {OUTCOME[code]}")
    return max(codes)


def _run_echo(
    target: SdkTarget, examples: int | None, seed: int | None, out: Path | None, timeout: float
) -> int:
    """The conform.echo campaign against one SDK; returns its exit status."""
    from fakepeer.fuzz.campaign import FuzzSetupError, run_campaign  # hypothesis: ~0.4 s

    try:
        result = run_campaign(
            target, examples=examples or ECHO_EXAMPLES, seed=seed, out=out, timeout=timeout
        )
    except FuzzSetupError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        return 2
    report(result)
    lost = [failure.write_error for failure in result.failures if failure.write_error]
    for problem in lost:
        typer.echo(f"ryusen-conform: error: a counterexample fixture: {problem}", err=True)
    return 2 if lost else 1 if result.failures else 0


def _check_out(out: Path) -> None:
    """--out must be a folder the campaign can write into, known before it plays for minutes
    (a file in its place, a read-only mount); a full disk is only met when writing."""
    if out.exists() and not out.is_dir():
        _usage(f"--out {out}: not a folder")
    try:
        atomic.check_writable(out / "values" / "fixture.json")
    except OSError as exc:
        _usage(f"--out {out}: {exc}")


def _usage(message: str) -> None:
    typer.echo(f"ryusen-conform: error: {message}", err=True)
    raise typer.Exit(2)


def report(result: CampaignResult) -> None:
    """Print each counterexample as a fixture file, then one summary line."""
    from fakepeer.fuzz.fixture import fixture_text

    for failure in result.failures:
        typer.echo(f"COUNTEREXAMPLE ({failure.prop}): {failure.problem}")
        where = f" (written to {failure.path})" if failure.path else ""
        typer.echo(f"--- fixture {failure.fixture['id']}.json{where}")
        typer.echo(fixture_text(failure.fixture), nl=False)
        typer.echo("---")
    typer.echo(
        f"fuzzed {result.sdk}: {result.sent} documents in {result.seconds:.1f} s "
        f"({result.rate:.0f}/s), seed {result.seed}, {result.examples} examples per property, "
        f"{len(result.failures)} counterexample(s)"
    )


def register_commands(app: typer.Typer) -> None:
    """Add the `fuzz` command to the main CLI (fakepeer/cli/commands.py mounts it)."""
    app.command("fuzz")(fuzz)
