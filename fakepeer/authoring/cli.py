"""The `ryusen-conform fixtures ...` commands and the top-level `matrix` and `coverage` commands.

Exit codes: 0 success; 1 a `--check` found work to do; 2 the input is wrong (problems are printed
as `file: pointer: message` lines, never as a traceback).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Annotated

import typer

from fakepeer import atomic
from fakepeer.cases import FixtureError, fixture_files, repository_root
from fakepeer.cases.root import RootError, active_root, refuse_installed, writable_default

fixtures_app = typer.Typer(
    help="Validate, format, scaffold and record conformance fixtures.", no_args_is_help=True
)

PathsArgument = Annotated[
    list[Path] | None,
    typer.Argument(help="Fixture files or folders (default: the repository's fixtures/)."),
]


def _paths(paths: list[Path] | None) -> list[Path]:
    return list(paths) if paths else [repository_root() / "fixtures"]


#: Longest --wait accepted (a day, as --timeout): beyond it a deadline is no deadline.
MAX_WAIT_SECONDS = 86_400.0


def _fail(lines: list[str] | str, status: int = 2) -> typer.Exit:
    for line in [lines] if isinstance(lines, str) else lines:
        typer.echo(line, err=True)
    return typer.Exit(status)


# ----------------------------------------------------------------------------- validate


@fixtures_app.command("validate")
def validate_command(paths: PathsArgument = None) -> None:
    """Check fixtures: schema, naming, unique ids, RFD 2 quotes, § refs, kinds, macros."""
    from fakepeer.authoring.oracle_check import OracleCheck
    from fakepeer.authoring.validate import validate_paths

    oracle = OracleCheck()
    if not paths:
        _note_own_fixtures()
    try:
        count, problems = validate_paths(_paths(paths), oracle)
    except OSError as exc:
        raise _fail(f"cannot read the protocol documents: {exc}") from None
    if problems:
        files = {str(problem.file) for problem in problems}
        raise _fail(
            [str(problem) for problem in problems]
            + [f"{len(problems)} problem(s) in {len(files)} file(s); {count} checked"]
        )
    typer.echo(
        f"{count} fixture file(s) valid; the oracle recomputed {oracle.modelled} of "
        f"{oracle.invokes} registry invokes in {len(oracle.fixtures)} fixtures and agrees"
    )


# ----------------------------------------------------------------------------- fmt


@fixtures_app.command("fmt")
def fmt_command(
    paths: PathsArgument = None,
    check: Annotated[
        bool, typer.Option("--check", help="List files that need formatting; exit 1.")
    ] = False,
) -> None:
    """Rewrite fixtures in the canonical layout (2-space indent, fixed key order).

    Only fixture documents are touched (JSON objects with `id` and `steps`): other JSON files
    in a folder (package.json, schemas) are left alone; a named file that is not one is an error.
    """
    from fakepeer.authoring.formatting import format_text, is_fixture_text

    named = _paths(paths)
    try:
        files = fixture_files(named)
    except FixtureError as exc:
        raise _fail([str(problem) for problem in exc.problems]) from None
    changed, broken, fixtures = [], [], 0
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
            if not is_fixture_text(text):
                if file in named:
                    broken.append(f"{file}: (root): not a fixture (no `id` and `steps`)")
                continue
            fixtures += 1
            formatted = format_text(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            broken.append(f"{file}: (root): expected a JSON document: {exc}")
            continue
        if formatted != text:
            changed.append(file)
            if not check:
                try:
                    refuse_installed(file, "the formatted fixture")
                except RootError as exc:
                    raise _fail(str(exc)) from None
                try:
                    atomic.write_text(file, formatted)
                except OSError as exc:
                    broken.append(f"{file}: cannot write: {exc}")
    if broken:
        raise _fail(broken)
    for file in changed:
        typer.echo(f"{'would reformat' if check else 'reformatted'} {file}")
    if check and changed:
        raise _fail(f"{len(changed)} of {fixtures} fixture file(s) need `fixtures fmt`", 1)
    if not changed:
        typer.echo(f"{fixtures} fixture file(s) already formatted")


def _note_own_fixtures() -> None:
    """Outside a checkout, `fixtures new` writes ./fixtures: validating the corpus alone would
    leave it out silently, so say how to include it."""
    root = active_root()
    own = Path.cwd() / "fixtures"
    if root.source != "checkout" and own.is_dir() and own.resolve() != root.fixtures.resolve():
        typer.echo(
            f"note: checking the corpus at {root.fixtures}; ./fixtures is not part of it "
            "(check it with `ryusen-conform fixtures validate fixtures`)",
            err=True,
        )


# ----------------------------------------------------------------------------- new


@fixtures_app.command("new")
def new_command(
    fixture_id: Annotated[str, typer.Argument(metavar="ID", help="The new fixture's id.")],
    category: Annotated[str, typer.Option("--category", "-c", help="The fixture's category.")],
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="The fixtures root (default: the checkout's fixtures/; outside a checkout, "
            "./fixtures). Never a folder inside an installed package.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
) -> None:
    """Scaffold a fixture from a template (it fails validate until its TODOs are filled)."""
    from fakepeer.authoring.scaffold import ScaffoldError, write_scaffold

    try:
        if directory is None:
            root = writable_default(active_root(), Path("fixtures"), "the new fixture", "--dir DIR")
        else:
            refuse_installed(directory, "the new fixture")
            root = directory
        path = write_scaffold(fixture_id, category, root, force)
    except (ScaffoldError, RootError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write the new fixture: {exc}") from None
    typer.echo(f"created {path}")
    active = active_root()
    if not path.resolve().is_relative_to(active.fixtures.resolve()):
        shown = os.path.relpath(root)
        typer.echo(
            f"note: {shown} is your own fixtures folder, not the corpus commands use by default "
            f"({active.fixtures}): check it with `ryusen-conform fixtures validate {shown}`, run "
            f"it with `ryusen-conform run --fixtures {shown} -k {fixture_id}`"
        )


# ----------------------------------------------------------------------------- prove

from fakepeer.authoring.prove import prove_command  # noqa: E402

fixtures_app.command("prove")(prove_command)


# ----------------------------------------------------------------------------- record


@fixtures_app.command("record")
def record_command(
    sdk: Annotated[str, typer.Option("--sdk", help="The conformance host command line.")],
    source: Annotated[Path, typer.Option("--from", help="The draft fixture whose sends to play.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where to write: a file name ending in .recorded.json (so a recording never "
            "replaces an accepted fixture), outside any installed package. Default: "
            "<id>.recorded.json beside the draft.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing recording.")] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for a first answer.")
    ] = 5.0,
) -> None:
    """Record an SDK's answers to a draft's sends into a draft file for a person to review."""
    if not (math.isfinite(wait) and 0 < wait <= MAX_WAIT_SECONDS):  # inf, 1e308, nan, -1
        raise _fail(
            f"--wait takes a number of seconds above 0 and at most {MAX_WAIT_SECONDS:g}, "
            f"not {wait:g}"
        )
    from fakepeer.authoring.record import (
        RecordError,
        draft_path,
        load_draft,
        record,
        write_recording,
    )

    try:
        document = load_draft(source)
        path = draft_path(source, document["id"], out)
        refuse_installed(path, "the recording")
        if path.exists() and not force:
            raise RecordError(f"{path} exists; pass --force to replace this draft")
        atomic.check_writable(path)
        recording = record(source, sdk, first_wait=wait)
        write_recording(recording, path, force)
    except RootError as exc:
        raise _fail(str(exc)) from None
    except RecordError as exc:
        raise _fail(str(exc), exc.status) from None
    except OSError as exc:
        raise _fail(f"cannot write the recording: {exc}") from None
    for warning in recording.warnings:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(
        f"recorded {recording.frames} frame(s) into {path}: a DRAFT; check every expect against "
        "docs/protocol.md before saving it as <id>.json"
    )


# ----------------------------------------------------------------------------- matrix, coverage


def matrix_command(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when matrix.json is stale.")
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", help="Default: <repo>/matrix.json.")
    ] = None,
    fixtures: Annotated[
        Path | None, typer.Option("--fixtures", help="The fixtures root (default: fixtures/).")
    ] = None,
) -> None:
    """Generate matrix.json, the machine-readable index of every fixture."""
    from fakepeer.authoring.matrix import (
        build_matrix,
        default_matrix_path,
        render_matrix,
        stale_reason,
    )

    path = output if output is not None else default_matrix_path()
    if not check:
        try:
            if output is None and not active_root().writable:
                raise RootError(
                    f"{path} is not in the checkout you stand in ({active_root().describe()}); "
                    "run inside a checkout or pass --output FILE"
                    if active_root().source == "source"
                    else f"the bundled {path} is read-only; run inside a checkout or pass "
                    "--output FILE"
                )
            refuse_installed(path, "the matrix")
        except RootError as exc:
            raise _fail(str(exc)) from None
    try:
        text = render_matrix(build_matrix(fixtures))
    except FixtureError as exc:
        raise _fail([str(problem) for problem in exc.problems]) from None
    except OSError as exc:
        raise _fail(f"cannot read the protocol documents: {exc}") from None
    if check:
        reason = stale_reason(path, text)
        if reason is not None:
            raise _fail(f"{reason}; run `ryusen-conform matrix`", 1)
        typer.echo(f"{path} is up to date")
        return
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise _fail(f"cannot write {path}: {exc}") from None
    typer.echo(f"wrote {path} ({json.loads(text)['count']} fixtures)")


def coverage_command(
    paths: PathsArgument = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    uncovered: Annotated[
        bool, typer.Option("--uncovered", help="List only uncovered sentences.")
    ] = False,
) -> None:
    """List each RFD 2 sentence with the fixtures whose quotes fall in it, and those with none."""
    from fakepeer.authoring.coverage import coverage_for, render_text

    try:
        report = coverage_for(list(paths) if paths else None)
    except FixtureError as exc:
        raise _fail([str(problem) for problem in exc.problems]) from None
    except OSError as exc:
        raise _fail(f"cannot read the protocol documents: {exc}") from None
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        typer.echo(render_text(report, uncovered_only=uncovered), nl=False)


def register_commands(app: typer.Typer) -> None:
    """Add the top-level `matrix` and `coverage` commands to the main CLI."""
    app.command("matrix")(matrix_command)
    app.command("coverage")(coverage_command)
