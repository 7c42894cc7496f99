"""The `merge` command: the JSON reports of shards read back as one run, printed and written
through the same output loop as `run`, exiting as the whole run would (never greener than a
shard)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from fakepeer.cli import outputs
from fakepeer.cli.options import UsageProblem, check_outputs, with_report_options
from fakepeer.report import ReportError, RunInfo, make_console, merge_documents, to_document


@functools.partial(with_report_options, lenient_option=False)
def merge(
    shards: Annotated[list[Path], typer.Argument(metavar="REPORT", hidden=True)],
    *,
    allow_partial: Annotated[
        bool,
        typer.Option(
            "--allow-partial", help="Merge even when shards or selected cases are missing."
        ),
    ] = False,
    allow_mixed: Annotated[
        bool,
        typer.Option("--allow-mixed", help="Merge reports of different fixture selections."),
    ] = False,
    reports: dict[str, Path],
    strict: bool,
) -> None:
    """Combine the JSON reports of shards (REPORT...) into one run: print it, write the asked-for
    reports, and exit as the whole run would."""
    console = make_console()
    check_outputs(reports)
    try:
        merged = merge_documents(shards, allow_partial=allow_partial, allow_mixed=allow_mixed)
    except ReportError as exc:
        raise UsageProblem(str(exc)) from None
    result = merged.run
    result.strict = result.strict or strict
    info = RunInfo(catalog=merged.catalog, selection=merged.selection, corpus=merged.corpus)
    outputs.show_run(console, result, outputs.write_reports(to_document(result, info), reports))
    worst = max(merged.shard_statuses.values(), default=0)
    if worst > result.exit_status():
        for path, status in merged.shard_statuses.items():
            if status > result.exit_status():
                print(f"merge: {path} exited {status}: the merged run is no greener", flush=True)
    missing = []
    if merged.missing:
        missing = [
            f"{merged.missing} selected case(s) are in no report (--allow-partial): no verdict "
            "on them, so the merge cannot pass"
        ]
    outputs.finish(result, floor=worst, blockers=missing)


def register_commands(app: typer.Typer) -> None:
    """Mount `merge` on the main command line."""
    app.command("merge")(merge)
