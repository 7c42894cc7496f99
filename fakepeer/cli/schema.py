"""The `schema` command: the JSON Schemas of every message kind, of fixtures and of the JSON
report, written into one folder for tools outside the bench."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fakepeer import atomic
from fakepeer.cli.options import UsageProblem


def schema(
    out: Annotated[
        Path, typer.Option("--out", help="Folder to write the JSON Schemas into.", metavar="DIR")
    ],
) -> None:
    """Export the JSON Schema of every message kind, of fixtures and of the JSON report."""
    from fakepeer.protocol.schema import export_schemas

    try:
        written = list(export_schemas(out))
        package = Path(__file__).resolve().parents[1]  # fakepeer/
        for source in (
            package / "cases" / "fixture.schema.json",
            package / "report" / "report.schema.json",
        ):
            target = out / source.name
            atomic.write_bytes(target, source.read_bytes())
            written.append(target)
    except OSError as exc:
        raise UsageProblem(f"cannot write schemas to {out}: {exc}") from None
    print(f"wrote {len(written)} schemas to {out}")


def register_commands(app: typer.Typer) -> None:
    """Mount `schema` on the main command line."""
    app.command("schema")(schema)
