"""The `run` command: its options, their checks, and the run itself, from starting the hosts
(early, so their start-up overlaps loading the fixtures) to the reports and the exit status.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fakepeer.cases import default_fixture_dir
from fakepeer.cases.corpus_version import corpus_version
from fakepeer.cases.variants import FLEET_VARIANTS, VARIANTS, parse_variants, with_variants
from fakepeer.cli import outputs
from fakepeer.cli.options import (
    MAX_JOBS,
    UsageProblem,
    check_outputs,
    check_positive,
    parse_keywords,
    parse_shard,
    with_report_options,
)
from fakepeer.cli.selection import Choice, changed_since, load_selection, only_ids
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.report import (
    RunInfo,
    RunProgress,
    catalog_from_fixtures,
    make_console,
    print_listing,
    to_document,
)
from fakepeer.report.document import order_text, selection_of
from fakepeer.session import EarlyStart, RunResult, targets_from_options
from fakepeer.suite import DEFAULT_CASE_TIMEOUT, RunOptions, rerun, run_suite
from fakepeer.suite import known_failures as known_lists
from fakepeer.suite.order import parse_seed
from fakepeer.transport import CommandError

if TYPE_CHECKING:
    from rich.console import Console

    from fakepeer.cases.model import Fixture
    from fakepeer.compare import Finding
    from fakepeer.session.sdk import SdkSession
    from fakepeer.session.wire import WireLog

EPILOG = """\b
Fixtures: fixtures/ of the checkout around the current folder (found like git finds its own),
or of --root DIR, else the corpus bundled with the package; the first line printed says which.
--no-default-fixtures leaves it out; --fixtures adds files or folders.
--sdk CMD is split like a shell line. A program path with a '/' (./host, runners/node/conform)
is resolved from the current directory, a bare name is looked up on PATH; the host runs in the
current directory. Without --sdk, the bundled Python reference SDK runs.
\b
-k EXPR: names matched (case-insensitively, as substrings) against each fixture's id and
category, combined with and, or, not and parentheses, as in pytest:
  -k "replay and not timers"   -k "(values or json) and utf16"
A repeated -k narrows: a fixture must match every one.
\b
--known-failures FILE or LABEL=FILE (repeatable): fixture ids expected to fail, one a line with
an optional '# reason'; LABEL is an --sdk text and FILE applies to every SDK without one. A file
may hold several SDKs' lists under [LABEL] lines.
\b
The edit-run loop: -k reads only the fixture files it selects; checked fixtures are cached by
content in ~/.cache/ryusen-conform (RYUSEN_CONFORM_CACHE=DIR moves it, =off turns it off);
--maxfail N / -x stop early, --last-failed re-runs what failed last time from this folder,
--ids-from FILE runs the ids in FILE. Failures with one reason are shown once, with the ids.
\b
Exit status: 0 every required case passed or is a listed known failure; 1 a case failed, errored
or a listed known failure passed or is no fixture (unless --lenient); 2 usage or fixture errors;
3 the bench itself failed on a case (an internal error: no verdict); 130 interrupted (Ctrl-C,
SIGTERM, SIGHUP, SIGQUIT), with the reports written and unfinished cases marked not run.
The last line is 'N passed, N failed', then ', N errors', ', N skipped', ', N xfailed',
', N xpassed' and ', N known-failure list errors' when there are any.
"""


@with_report_options
def run(
    sdk: Annotated[
        list[str] | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host (repeatable), or "
            "python:[PATH:]MODULE:FUNCTION for a host written in Python, run inside the bench "
            "(FUNCTION(reader, writer) serves frames as a host does on stdin/stdout; PATH is "
            "added to the import path). Default: the bundled Python reference SDK.",
            metavar="CMD",
        ),
    ] = None,
    fixtures: Annotated[
        list[Path] | None,
        typer.Option(
            "--fixtures", help="Fixture file or folder to load too (repeatable).", metavar="PATH"
        ),
    ] = None,
    no_default_fixtures: Annotated[
        bool, typer.Option("--no-default-fixtures", help="Do not load the default corpus.")
    ] = False,
    keyword: Annotated[
        list[str] | None,
        typer.Option(
            "-k",
            help="Only fixtures matching the expression (see below; repeatable).",
            metavar="EXPR",
        ),
    ] = None,
    category: Annotated[
        list[str] | None,
        typer.Option("--category", help="Only this category (repeatable).", metavar="NAME"),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", help="Run shard K of N (by sorted fixture id).", metavar="K/N"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only fixtures added or changed after this release (a package version 0.4.0 or "
            "a corpus version 3.0; `ryusen-conform changes --since` says what changed).",
            metavar="VERSION",
        ),
    ] = None,
    list_only: Annotated[
        bool, typer.Option("--list", help="List the selected fixtures; run nothing.")
    ] = False,
    variants: Annotated[
        str,
        typer.Option(
            "--variants",
            help="Derived variants to run besides each fixture (FIXTURE@VARIANT): all, none, "
            f"or a comma-separated list of {', '.join(VARIANTS)} (fresh-process: on the first "
            "fixture of each selected category, a sample; --list shows the cases).",
            metavar="all|none|NAME,...",
        ),
    ] = "none",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help=f"Seconds allowed per case (default {DEFAULT_CASE_TIMEOUT:g}).",
            metavar="SECONDS",
            show_default=False,
        ),
    ] = DEFAULT_CASE_TIMEOUT,
    max_time: Annotated[
        float | None,
        typer.Option(
            "--max-time",
            help="Seconds allowed for the whole run, cleanup included.",
            metavar="SECONDS",
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            help=f"SDK sessions in parallel (default 1; at most {MAX_JOBS}, and never more than "
            "the selected fixtures).",
            metavar="N",
            show_default=False,
        ),
    ] = 1,
    known_failures: Annotated[
        list[str] | None,
        typer.Option(
            "--known-failures",
            help="Fixture ids expected to fail (see below; repeatable).",
            metavar="[LABEL=]FILE",
        ),
    ] = None,
    update_failures: Annotated[
        bool,
        typer.Option(
            "--update-failures",
            help="Rewrite the --known-failures lists to this run's failures.",
        ),
    ] = False,
    write_failures: Annotated[
        Path | None,
        typer.Option(
            "--write-failures", help="Write this run's failures to a new list.", metavar="PATH"
        ),
    ] = None,
    maxfail: Annotated[
        int | None,
        typer.Option(
            "--maxfail",
            help="Stop after N cases that fail the run; the rest are reported not run.",
            metavar="N",
        ),
    ] = None,
    exitfirst: Annotated[
        bool, typer.Option("-x", "--exitfirst", help="Stop at the first failure (--maxfail 1).")
    ] = False,
    last_failed: Annotated[
        bool,
        typer.Option(
            "--last-failed",
            "--lf",
            help="Run only the cases that failed when last run from this folder (all of the "
            "selection when none are recorded).",
        ),
    ] = False,
    ids_from: Annotated[
        Path | None,
        typer.Option(
            "--ids-from",
            help="Run only the fixture ids listed in FILE (one a line, '#' comments; a "
            "known-failures list works).",
            metavar="FILE",
        ),
    ] = None,
    shuffle: Annotated[
        str | None,
        typer.Option(
            "--shuffle",
            help="Play the cases in a seeded random order (a new seed without SEED); the seed "
            "is printed and in every report, and the same seed replays the same order.",
            metavar="[SEED]",
        ),
    ] = None,
    start_timeout: Annotated[
        float | None,
        typer.Option(
            "--start-timeout",
            help="Seconds a host may take from its start to the end of registration (default: "
            "10, or --timeout when longer); for a host that compiles on first start.",
            metavar="SECONDS",
        ),
    ] = None,
    isolate: Annotated[
        bool,
        typer.Option(
            "--isolate",
            help="Play every case on a fresh host process (slow: a start and handshake per case).",
        ),
    ] = False,
    *,
    reports: dict[str, Path],
    strict: bool,
    lenient: bool,
) -> None:
    """Run the conformance fixtures against one or more SDKs."""
    began = time.monotonic()  # --max-time covers loading the fixtures too
    console = make_console()
    parsed_shard = parse_shard(shard)
    expressions = parse_keywords(keyword or [])
    check_positive("--timeout", timeout)
    if max_time is not None:
        check_positive("--max-time", max_time)
    if start_timeout is not None:
        check_positive("--start-timeout", start_timeout)
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageProblem(f"--jobs takes a whole number from 1 to {MAX_JOBS}, got {jobs}")
    if write_failures is not None:
        write_failures = Path(os.path.abspath(write_failures))
    check_outputs(reports, write_failures)
    try:
        seed = None if shuffle is None else parse_seed(shuffle)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    if update_failures and not known_failures:
        raise UsageProblem("--update-failures rewrites the --known-failures lists: name one")
    if exitfirst:
        maxfail = 1 if maxfail is None else min(maxfail, 1)
    if maxfail is not None and maxfail < 1:
        raise UsageProblem(f"--maxfail takes a whole number of cases above 0, got {maxfail}")
    # the hosts start now: their start-up overlaps loading the fixtures (None for --list)
    early = None if list_only else _start_early(sdk)
    try:
        version = None if no_default_fixtures else corpus_version(default_fixture_dir())
        described = (
            f"{version.describe() if version else 'corpus: none (--no-default-fixtures)'}, "
            f"protocol {PROTOCOL_VERSION}"
        )
        if list_only:  # --list's stdout is the listing alone (tab-separated, for scripts)
            print(described, file=sys.stderr)
        else:
            console.print(described, markup=False, highlight=False)
        touched = None if since is None else changed_since(since, console)
        try:
            chosen_variants = parse_variants(variants)
        except ValueError as exc:
            raise UsageProblem(f"--variants: {exc}") from None
        only = only_ids(ids_from, last_failed)
        selected, unsharded, all_ids = load_selection(
            console,
            fixtures or [],
            no_default_fixtures,
            Choice(only, ids_from, touched, category or [], expressions, parsed_shard),
            chosen_variants,
        )
        if list_only:
            print_listing(selected)
            raise typer.Exit(0)
        if not unsharded or (not selected and parsed_shard is None):  # a shard of nothing too
            raise UsageProblem(f"no fixture matches the selection ({len(all_ids)} loaded)")
        assert early is not None  # only --list has none, and it has ended above
        targets = early.targets
        # a variant's id (FIXTURE@VARIANT) may be listed too
        corpus_ids = all_ids | {fixture.id for fixture in selected}
        labels = [target.label for target in targets]
        if len(targets) > 1 and set(chosen_variants) & set(FLEET_VARIANTS):
            from fakepeer.server.fleet_suite import fleet_names  # a pair's label and cases

            pair_labels, fleet_ids = fleet_names(targets, selected, chosen_variants)
            labels, corpus_ids = labels + pair_labels, corpus_ids | fleet_ids
        known = _read_known(known_failures or [], labels)
        options = RunOptions(
            timeout=timeout,
            max_time=max_time,
            jobs=jobs,
            strict=strict,
            max_failures=maxfail,
            tolerated=lambda label, ident: known_lists.is_listed(known, label, ident),
            shuffle_seed=seed,
            isolate=isolate,
            start_timeout=start_timeout,
            began=began,
            lifecycle_player=_play_lifecycle,
        )
        if seed is not None or isolate:
            console.print(f"order: {order_text({'shuffle_seed': seed, 'isolate': isolate})}")
        with RunProgress(console, targets, len(selected)) as progress:
            result = run_suite(targets, selected, options, on_result=progress.advance)
        first_shard = parsed_shard is None or parsed_shard.index == 1  # publishes, once
        _run_fleets(console, targets, selected, chosen_variants, options, result, first_shard)
    finally:
        if early is not None:
            early.close()  # what no session took: a usage error while loading, Ctrl-C
    result.lenient = lenient
    rerun.record_last_failed(default_fixture_dir(), result, (case.id for case in selected))
    known_lists.apply(result, known)
    if not update_failures:
        result.list_problems = known_lists.problems(known, corpus_ids)
    whole = selected if parsed_shard is None else with_variants(unsharded, chosen_variants)
    info = RunInfo(
        shard=str(parsed_shard) if parsed_shard else None,
        timeout=timeout,
        catalog=catalog_from_fixtures(selected),
        selection=selection_of(fixture.id for fixture in whole),
        corpus=version.to_json() if version else None,
    )
    outputs.show_run(console, result, outputs.write_reports(to_document(result, info), reports))
    if update_failures and not result.interrupted:
        outputs.update_failures(result, known, corpus_ids, console)
    if write_failures is not None and not result.interrupted:
        outputs.write_failures(result, write_failures, console)
    outputs.finish(result)


def _start_early(commands: list[str] | None) -> EarlyStart:
    try:
        return EarlyStart(targets_from_options(commands))
    except CommandError as exc:
        raise UsageProblem(str(exc)) from None


def _play_lifecycle(
    session: SdkSession,
    fixture: Fixture,
    deadline: float | None,
    wire: WireLog | None,
    limit: float | None,
) -> list[Finding]:
    """The model server's player of lifecycle fixtures (`RunOptions.lifecycle_player`), imported
    only when a lifecycle case runs: `run -k ONE` stays quick to start."""
    from fakepeer.server.lifecycle import play_lifecycle

    return play_lifecycle(session, fixture, deadline, wire, limit)


def _run_fleets(
    console: Console,
    targets: list,
    selected: list,
    variants: tuple[str, ...],
    options: RunOptions,
    result: RunResult,
    publish: bool,
) -> None:
    """With two or more SDKs, each pair serves the lifecycle scenarios as a fleet (`@fleet`,
    `@rolling`) and publishes the application (`fleet.publication`, in the first shard only):
    one SDK run per pair."""
    if len(targets) < 2 or result.interrupted or not set(variants) & set(FLEET_VARIANTS):
        return
    from fakepeer.server.fleet_suite import run_fleets

    console.print(f"fleet: every pair of the {len(targets)} SDKs serves the lifecycle scenarios")
    overall = (
        None if not options.max_time else (options.began or time.monotonic()) + options.max_time
    )
    result.sdks.extend(
        run_fleets(
            targets,
            selected,
            variants,
            timeout=options.timeout,
            overall=overall,
            publish=publish,
        )
    )


def _read_known(specs: list[str], labels: list[str]) -> known_lists.KnownFailures:
    """The --known-failures lists, each applied to its SDK label (or to every SDK)."""
    try:
        return known_lists.read_lists(specs, labels)
    except known_lists.KnownFailuresError as exc:
        raise UsageProblem(str(exc)) from None


def register_commands(app: typer.Typer) -> None:
    """Mount `run` on the main command line."""
    app.command("run", epilog=EPILOG)(run)
