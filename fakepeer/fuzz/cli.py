"""The `fuzz` command; `register_commands(app)` mounts it on the main `ryusen-conform` CLI.

Exit status: 0 when no counterexample was found, 1 when one was (each printed as a fixture
file), 2 when the SDK cannot be started or the command line is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fakepeer.fuzz.campaign import CampaignResult, FuzzSetupError, run_campaign
from fakepeer.fuzz.fixture import fixture_text
from fakepeer.session.targets import command_target, default_target
from fakepeer.transport.process import CommandError


def fuzz(
    sdk: Annotated[
        str | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host. Default: the bundled Python reference SDK.",
        ),
    ] = None,
    examples: Annotated[
        int, typer.Option("--examples", min=1, help="Examples per property (round trip, refusal).")
    ] = 100,
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
) -> None:
    """Fuzz an SDK's tagged value codec through conform.echo in one long-lived session."""
    try:
        target = command_target(sdk) if sdk else default_target()
    except CommandError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        result = run_campaign(target, examples=examples, seed=seed, out=out, timeout=timeout)
    except FuzzSetupError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    report(result)
    raise typer.Exit(1 if result.failures else 0)


def report(result: CampaignResult) -> None:
    """Print each counterexample as a fixture file, then one summary line."""
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
