"""The `ryusen-conform` command line: run, schema, merge, and the fixtures sub-app.

Exit status: 0 when every required case passes or is a known failure, 1 on failures, 2 on usage
or fixture errors. After a run, the last line printed is exactly `N passed, N failed` (with
`, N skipped` when any were skipped), for CI systems to read.
"""

from __future__ import annotations

import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from fakepeer.cases import FixtureError, Shard, default_fixture_dir, load_fixtures, select
from fakepeer.cases.root import RootError, configure
from fakepeer.cases.variants import VARIANTS, parse_variants, with_variants
from fakepeer.report import (
    ReportError,
    RunInfo,
    RunProgress,
    catalog_from_fixtures,
    make_console,
    merge_documents,
    print_listing,
    print_run,
    to_document,
    write_document,
    write_html,
    write_junit,
    write_markdown,
)
from fakepeer.session import (
    DEFAULT_CASE_TIMEOUT,
    EXIT_USAGE,
    RunOptions,
    RunResult,
    format_known_failures,
    read_known_failures,
    run_suite,
    summary_line,
    targets_from_options,
)
from fakepeer.transport import CommandError, close_all

app = typer.Typer(
    name="ryusen-conform",
    help="Language-neutral conformance bench for the Ryusen execution protocol (RFD 2).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _choose_root(
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            help="The checkout to work on (default: the one containing the current folder, "
            "else the corpus bundled with the package, read-only).",
            metavar="DIR",
        ),
    ] = None,
) -> None:
    """Language-neutral conformance bench for the Ryusen execution protocol (RFD 2)."""
    configure(root, announce=True)


class UsageProblem(Exception):
    """A command line that cannot be carried out; reported as one paragraph, exit status 2."""


@dataclass(frozen=True)
class ReportPaths:
    """Where to write each report format; None means not asked for."""

    json: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None


# ----------------------------------------------------------------------------- run


@app.command()
def run(
    sdk: Annotated[
        list[str] | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host (repeatable). "
            "Default: the bundled Python reference SDK.",
        ),
    ] = None,
    fixtures: Annotated[
        list[Path] | None,
        typer.Option("--fixtures", help="Fixture file or folder to add to fixtures/ (repeatable)."),
    ] = None,
    no_default_fixtures: Annotated[
        bool, typer.Option("--no-default-fixtures", help="Do not load the repository's fixtures/.")
    ] = False,
    keyword: Annotated[
        str | None,
        typer.Option(
            "-k", help="Only fixtures whose id or category contains EXPR.", metavar="EXPR"
        ),
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="Only this category (repeatable).")
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", help="Run shard K of N (by sorted fixture id).", metavar="K/N"),
    ] = None,
    list_only: Annotated[
        bool, typer.Option("--list", help="List the selected fixtures; run nothing.")
    ] = False,
    variants: Annotated[
        str,
        typer.Option(
            "--variants",
            help="Derived variants to run besides each fixture (FIXTURE@VARIANT): all, none, "
            f"or a comma-separated list of {', '.join(VARIANTS)}.",
            metavar="all|none|NAME,...",
        ),
    ] = "none",
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds allowed per case.", min=0.001)
    ] = DEFAULT_CASE_TIMEOUT,
    max_time: Annotated[
        float | None,
        typer.Option("--max-time", help="Seconds allowed for the whole run.", min=0.001),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="SDK sessions in parallel.", min=1)] = 1,
    known_failures: Annotated[
        Path | None, typer.Option("--known-failures", help="File of fixture ids expected to fail.")
    ] = None,
    write_failures: Annotated[
        Path | None, typer.Option("--write-failures", help="Write the current failures to FILE.")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Recommended failures and unexpected passes fail the run."),
    ] = False,
    report_json: Annotated[
        Path | None, typer.Option("--report-json", help="Write the JSON report.")
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write a Markdown summary.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Write a self-contained HTML report (matrix, diffs, wire logs)."
        ),
    ] = None,
) -> None:
    """Run the conformance fixtures against one or more SDKs."""
    console = make_console()
    parsed_shard = _parse_shard(shard)
    corpus = _load(fixtures or [], not no_default_fixtures)
    selected = select(corpus, keyword=keyword, categories=category or (), shard=parsed_shard)
    try:
        selected = with_variants(selected, parse_variants(variants))
    except ValueError as exc:
        raise UsageProblem(f"--variants: {exc}") from None
    if list_only:
        print_listing(selected)
        raise typer.Exit(0)
    if not selected and parsed_shard is None:
        raise UsageProblem(f"no fixture matches the selection ({len(corpus)} loaded)")
    ids = {fixture.id for fixture in corpus} | {fixture.id for fixture in selected}
    known = _read_known(known_failures, ids, console)
    try:
        targets = targets_from_options(sdk)
    except CommandError as exc:
        raise UsageProblem(str(exc)) from None
    options = RunOptions(
        timeout=timeout, max_time=max_time, jobs=jobs, known_failures=known, strict=strict
    )
    with RunProgress(console, targets, len(selected)) as progress:
        result = run_suite(targets, selected, options, on_result=progress.advance)
    print_run(console, result)
    info = RunInfo(
        shard=str(parsed_shard) if parsed_shard else None,
        timeout=timeout,
        fixtures=len(selected),
        catalog=catalog_from_fixtures(selected),
    )
    _write_outputs(result, info, ReportPaths(report_json, junit, markdown, html), console)
    if write_failures is not None:
        _write_failures(result, write_failures, console)
    _finish(result)


def _parse_shard(text: str | None) -> Shard | None:
    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None


def _load(extra: list[Path], include_default: bool) -> list:
    paths = list(extra)
    if not include_default:  # the root is not consulted (nor announced) when it is not used
        if not paths:
            raise UsageProblem("no fixtures to load: --no-default-fixtures and no --fixtures given")
        return load_fixtures(paths)
    default = default_fixture_dir()
    if default.is_dir():
        paths.insert(0, default)
    if not paths:
        raise UsageProblem(f"no fixtures to load: {default} does not exist and no --fixtures given")
    return load_fixtures(paths)


def _read_known(path: Path | None, corpus_ids: set[str], console) -> frozenset[str]:
    if path is None:
        return frozenset()
    try:
        known = read_known_failures(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"cannot read --known-failures {path}: {exc}") from None
    for unknown in sorted(known - corpus_ids):
        console.print(
            f"[yellow]warning:[/yellow] --known-failures lists {unknown}, which is not a "
            "loaded fixture",
            markup=True,
        )
    return known


def _write_outputs(result: RunResult, info: RunInfo, paths: ReportPaths, console) -> None:
    try:
        if paths.json is not None:
            write_document(to_document(result, info), paths.json)
            console.print(f"wrote the JSON report to {paths.json}", markup=False)
        if paths.junit is not None:
            write_junit(result, paths.junit)
            console.print(f"wrote JUnit XML to {paths.junit}", markup=False)
        if paths.markdown is not None:
            write_markdown(result, paths.markdown)
            console.print(f"wrote the Markdown summary to {paths.markdown}", markup=False)
        if paths.html is not None:
            write_html(result, paths.html, info)
            console.print(f"wrote the HTML report to {paths.html}", markup=False)
    except OSError as exc:
        raise UsageProblem(f"cannot write a report: {exc}") from None


def _write_failures(result: RunResult, path: Path, console) -> None:
    ids = {case.id for sdk in result.sdks for case in sdk.failures()}
    header = (
        f"Known failures written by ryusen-conform on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
        f"SDK: {', '.join(sdk.label for sdk in result.sdks)}"
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_known_failures(ids, header), encoding="utf-8")
    except OSError as exc:
        raise UsageProblem(f"cannot write --write-failures {path}: {exc}") from None
    console.print(f"wrote {len(ids)} failure(s) to {path}", markup=False)


def _finish(result: RunResult) -> None:
    sys.stderr.flush()
    sys.stdout.flush()
    print(summary_line(result.counts()), flush=True)
    raise typer.Exit(result.exit_status())


# ----------------------------------------------------------------------------- schema


@app.command()
def schema(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the JSON Schemas into.")],
) -> None:
    """Export the JSON Schema of every message kind, of fixtures and of the JSON report."""
    from fakepeer.protocol.schema import export_schemas

    try:
        written = list(export_schemas(out))
        here = Path(__file__).resolve().parent
        for source in (
            here / "cases" / "fixture.schema.json",
            here / "report" / "report.schema.json",
        ):
            target = out / source.name
            shutil.copyfile(source, target)
            written.append(target)
    except OSError as exc:
        raise UsageProblem(f"cannot write schemas to {out}: {exc}") from None
    print(f"wrote {len(written)} schemas to {out}")


# ----------------------------------------------------------------------------- merge


@app.command()
def merge(
    reports: Annotated[list[Path], typer.Argument(help="JSON reports of the shards.")],
    report_json: Annotated[
        Path | None,
        typer.Option("--out", "--report-json", help="Write the merged JSON report."),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write a Markdown summary.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report.")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="As for run.")] = False,
) -> None:
    """Combine shard JSON reports into one, print it, and exit as the whole run would."""
    console = make_console()
    try:
        merged = merge_documents(reports)
    except ReportError as exc:
        raise UsageProblem(str(exc)) from None
    result = merged.run
    result.strict = result.strict or strict
    print_run(console, result)
    info = RunInfo(catalog=merged.catalog)
    _write_outputs(result, info, ReportPaths(report_json, junit, markdown, html), console)
    _finish(result)


# ----------------------------------------------------------------------------- fixtures sub-app
# The fixtures engineer's commands (`ryusen-conform fixtures validate`, ...) are mounted here,
# and the fuzz engineer's `ryusen-conform fuzz` next to them.
from fakepeer.authoring.cli import fixtures_app, register_commands  # noqa: E402
from fakepeer.fuzz.cli import register_commands as register_fuzz_commands  # noqa: E402
from fakepeer.server.simulate import register_commands as register_simulate_commands  # noqa: E402

app.add_typer(fixtures_app, name="fixtures")
register_commands(app)
register_fuzz_commands(app)
register_simulate_commands(app)


# ----------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: usage, fixture and report errors are one paragraph, exit status 2."""
    signal.signal(signal.SIGTERM, _terminate)
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="ryusen-conform", standalone_mode=True)
        status = 0
    except SystemExit as exc:  # typer reports usage errors itself (exit status 2)
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except (UsageProblem, RootError) as exc:
        _say(str(exc))
        status = EXIT_USAGE
    except FixtureError as exc:
        count = len(exc.problems)
        _say(f"{count} fixture problem(s); nothing was run:\n" + "\n".join(map(str, exc.problems)))
        status = EXIT_USAGE
    except KeyboardInterrupt:
        close_all()
        _say("interrupted; every SDK process was stopped")
        status = 130
    finally:
        close_all()
    return int(status)


def _say(message: str) -> None:
    print(
        f"ryusen-conform: error: {message}"
        if not message.startswith("interrupted")
        else f"ryusen-conform: {message}",
        file=sys.stderr,
    )


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
