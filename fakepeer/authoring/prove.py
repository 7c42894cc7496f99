"""`ryusen-conform fixtures prove ID ...`: hand over to the checkout's `tests.mutants.prove`.

Why: proving a fixture (both reference SDKs pass it, which mutants it kills, the kill matrix and
matrix.json updated) needs the mutant catalogs and hosts of the repository's tests/mutants, which
no installed package carries. The package never imports from tests/: it runs
`python -m tests.mutants.prove` in the checkout's root as a subprocess, so the checkout's own
bench and mutants are used together.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from fakepeer.cases.root import active_root, quiet_root

PROVER = Path("tests") / "mutants" / "prove.py"
NEEDS_CHECKOUT = (
    "fixtures prove needs the repository's tests/mutants (its mutant catalogs and hosts): run it "
    "inside a checkout of ryusen-conform, or pass --root DIR"
)


def prove_command(
    ids: Annotated[
        list[str], typer.Argument(metavar="ID", help="Fixture ids of the checkout's corpus.")
    ],
    mutant: Annotated[
        list[str] | None,
        typer.Option(
            "--mutant",
            metavar="NAME",
            help="Play only this mutant (repeatable; default: every mutant of both catalogs).",
        ),
    ] = None,
    kill_matrix: Annotated[
        Path | None,
        typer.Option(
            "--kill-matrix",
            metavar="FILE",
            help="The kill matrix to update (default: tests/mutants/KILL_MATRIX.md).",
        ),
    ] = None,
    no_matrix_json: Annotated[
        bool, typer.Option("--no-matrix-json", help="Do not regenerate matrix.json.")
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", metavar="N", help="Mutant hosts at a time.")] = 2,
    new_rows: Annotated[
        bool,
        typer.Option(
            "--new-rows",
            help="First play every mutant without a row (new to a catalog) against the whole "
            "corpus and write its row, as a full regeneration would.",
        ),
    ] = False,
) -> None:
    """Prove fixtures: validate, pass both reference SDKs, kill mutants; update the matrices.

    Plays the named fixtures alone against every mutant of tests/mutants (as the kill matrix
    judges a kill) and updates KILL_MATRIX.md incrementally (only those fixtures' cells), then
    matrix.json. Inside a checkout only.
    """
    root = quiet_root()
    if root.source not in ("checkout", "--root") or not (root.path / PROVER).is_file():
        typer.echo(NEEDS_CHECKOUT, err=True)
        raise typer.Exit(2)
    active_root()  # the `root:` line every command prints first
    argv = [sys.executable, "-m", "tests.mutants.prove", *ids, "--jobs", str(jobs)]
    for name in mutant or []:
        argv += ["--mutant", name]
    if kill_matrix is not None:
        argv += ["--kill-matrix", str(kill_matrix.resolve())]
    if no_matrix_json:
        argv.append("--no-matrix-json")
    if new_rows:
        argv.append("--new-rows")
    try:
        status = subprocess.run(argv, cwd=root.path, check=False).returncode
    except OSError as exc:
        typer.echo(f"fixtures prove: cannot start {sys.executable}: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(status if status >= 0 else 128 - status)
