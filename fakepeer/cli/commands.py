"""The `ryusen-conform` application: its top-level options (--root, --version) and every
command, mounted in the order `--help` lists them.

The commands of this package live one a module beside this one; the authoring commands
(`fixtures ...`, `matrix`, `coverage`, `changes`), `fuzz` and `simulate` live with their
packages and are mounted here the same way, each module's `register_commands(app)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fakepeer import __version__
from fakepeer.authoring import changes
from fakepeer.authoring import cli as authoring
from fakepeer.cases.corpus_version import corpus_version
from fakepeer.cases.root import RootError, active_root, configure
from fakepeer.cli import merge, run, schema
from fakepeer.fuzz import cli as fuzz
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.server import simulate

app = typer.Typer(
    name="ryusen-conform",
    help="Language-neutral conformance bench for the Ryusen execution protocol (RFD 2).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # plain help: no type labels such as <list[str]> or <bool>
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    """`--version`: the package, the corpus (as found like any command finds it) and protocol."""
    if value:
        print(f"ryusen-conform {__version__}")
        try:
            print(corpus_version(active_root().fixtures).describe())
        except RootError as exc:
            print(f"corpus: none ({exc})")
        print(f"protocol {PROTOCOL_VERSION}")
        raise typer.Exit(0)


@app.callback()
def _app(
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            help="The checkout to work on (default: the one containing the current folder, "
            "else the corpus bundled with the package, read-only).",
            metavar="DIR",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Language-neutral conformance bench for the Ryusen execution protocol (RFD 2)."""
    configure(root, announce=True)


# The commands, in the order `--help` lists them (typer lists a group such as `fixtures` last).
run.register_commands(app)
schema.register_commands(app)
merge.register_commands(app)
app.add_typer(authoring.fixtures_app, name="fixtures")
authoring.register_commands(app)
fuzz.register_commands(app)
simulate.register_commands(app)
changes.register_commands(app)
