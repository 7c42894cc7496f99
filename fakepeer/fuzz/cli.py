"""The `fuzz` command; `register_commands(app)` mounts it on the main `ryusen-conform` CLI.

Exit status: 0 when no counterexample was found, 1 when one was (each printed as a fixture
file), 2 when the SDK cannot be started or the command line is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fakepeer.session.targets import command_target, default_target
from fakepeer.transport.process import CommandError

if TYPE_CHECKING:
    from fakepeer.fuzz.campaign import CampaignResult

ECHO_EXAMPLES = 100


def fuzz(
    sdk: Annotated[
        str | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host. Default: the bundled Python reference SDK.",
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
        typer.Option("--max-time", help="With --semantics: stop playing after this many seconds."),
    ] = None,
) -> None:
    """Fuzz an SDK: its value codec through conform.echo, or (--semantics) its replay semantics."""
    if max_time is not None and not semantics:
        _usage("--max-time bounds a --semantics campaign; add --semantics")
    if max_time is not None and not max_time > 0:
        _usage(f"--max-time must be a positive number of seconds, not {max_time:g}")
    try:
        target = command_target(sdk) if sdk else default_target()
    except CommandError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    if whole_runs is not None:
        if semantics:
            _usage("--whole-runs and --semantics are two campaigns; run them one at a time")
        from fakepeer.fuzz.semantic_cli import run_whole_runs

        raise typer.Exit(run_whole_runs(target, whole_runs, seed))
    if semantics:
        from fakepeer.fuzz.semantic_cli import run_semantics

        raise typer.Exit(run_semantics(target, examples, seed, out, timeout, max_time))
    from fakepeer.fuzz.campaign import FuzzSetupError, run_campaign  # hypothesis: ~0.4 s

    try:
        result = run_campaign(
            target, examples=examples or ECHO_EXAMPLES, seed=seed, out=out, timeout=timeout
        )
    except FuzzSetupError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    report(result)
    raise typer.Exit(1 if result.failures else 0)


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
    """Add the `fuzz` command to the main CLI (fakepeer/cli.py mounts it)."""
    app.command("fuzz")(fuzz)
