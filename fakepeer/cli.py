"""The `ryusen-conform` command line: run, schema, merge, and the fixtures sub-app.

Exit status: 0 when every required case passes or is a known failure, 1 on failures, 2 on usage
or fixture errors, 3 when the bench itself failed on a case (an internal error: no verdict), 130
when a signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) interrupted the run. After a run, the last line
printed is exactly `N passed, N failed` (then `, N errors`, `, N skipped`, `, N xfailed`,
`, N xpassed` and `, N known-failure list errors` when there are any), for CI systems to read.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from fakepeer import __version__, atomic, interrupts
from fakepeer.cases import (
    FixtureError,
    Shard,
    default_fixture_dir,
    fixture_files,
    load_fixtures,
    select,
)
from fakepeer.cases.corpus_version import corpus_version
from fakepeer.cases.keywords import KeywordError, Keywords
from fakepeer.cases.loader import RECORDED_SUFFIX
from fakepeer.cases.root import RootError, active_root, configure
from fakepeer.cases.variants import FLEET_VARIANTS, VARIANTS, parse_variants, with_variants
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.report import (
    ReportError,
    RunInfo,
    RunProgress,
    catalog_from_fixtures,
    make_console,
    merge_documents,
    print_listing,
    print_run,
    reporters,
    to_document,
)
from fakepeer.report.document import order_text, selection_of
from fakepeer.report.merge import MISSING_REASON
from fakepeer.session import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    EarlyStart,
    RunResult,
    targets_from_options,
)
from fakepeer.streams import PipeSafeStream
from fakepeer.suite import DEFAULT_CASE_TIMEOUT, RunOptions, rerun, run_suite
from fakepeer.suite import known_failures as known_lists
from fakepeer.suite.order import bare_shuffle_argv, parse_seed
from fakepeer.transport import CommandError, close_all
from fakepeer.transport.inprocess import exiting_with

if TYPE_CHECKING:
    from rich.console import Console

    from fakepeer.cases.model import Fixture
    from fakepeer.compare import Finding
    from fakepeer.session.sdk import SdkSession
    from fakepeer.session.wire import WireLog

#: Longest --timeout / --max-time accepted (a day): beyond it a deadline is no deadline.
MAX_SECONDS = 86_400.0
#: Most SDK sessions in parallel (each one is a process; the machine has only so many cores).
MAX_JOBS = 64

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


class UsageProblem(Exception):
    """A command line that cannot be carried out; reported as one paragraph, exit status 2."""


def with_report_options(command: Callable, *, lenient_option: bool = True) -> Callable:
    """Add one `PATH` option per registered report format (and `--strict`, `--lenient`) to a
    command, handed to it as `reports={name: path}`: `run` and `merge` share this one list.
    `merge` has no `--lenient`: it never exits greener than its shards, so it would not apply."""
    signature = inspect.signature(command, eval_str=True)
    added = [
        inspect.Parameter(
            reporter.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                Path | None, typer.Option(*reporter.options, help=reporter.help, metavar="PATH")
            ],
        )
        for reporter in reporters()
    ]
    added += [
        inspect.Parameter(
            "strict",
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[
                bool, typer.Option("--strict", help="Recommended-level failures fail the run.")
            ],
        ),
        inspect.Parameter(
            "lenient",
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[
                bool,
                typer.Option(
                    "--lenient",
                    help="A listed known failure that passes, and a listed id that is no "
                    "fixture, do not fail the run.",
                ),
            ],
        ),
    ]
    if not lenient_option:
        added = [p for p in added if p.name != "lenient"]
    shared = {"reports", *(p.name for p in added)}
    kept = [p for p in signature.parameters.values() if p.name not in shared]

    @functools.wraps(command)
    def wrapper(**kwargs: object) -> None:
        paths = {r.name: kwargs.pop(r.name, None) for r in reporters()}
        # absolute now: an in-process host that changes the current folder cannot move them
        absolute = {name: Path(os.path.abspath(path)) for name, path in paths.items() if path}
        command(reports=absolute, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*kept, *added]}
    return wrapper


# ----------------------------------------------------------------------------- run

_RUN_EPILOG = """\b
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


@app.command(epilog=_RUN_EPILOG)
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
    parsed_shard = _parse_shard(shard)
    expressions = _parse_keywords(keyword or [])
    _check_positive("--timeout", timeout)
    if max_time is not None:
        _check_positive("--max-time", max_time)
    if start_timeout is not None:
        _check_positive("--start-timeout", start_timeout)
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageProblem(f"--jobs takes a whole number from 1 to {MAX_JOBS}, got {jobs}")
    if write_failures is not None:
        write_failures = Path(os.path.abspath(write_failures))
    _check_outputs(reports, write_failures)
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
        touched = None if since is None else _since(since, console)
        try:
            chosen_variants = parse_variants(variants)
        except ValueError as exc:
            raise UsageProblem(f"--variants: {exc}") from None
        only = _only_ids(ids_from, last_failed)
        selected, unsharded, all_ids = _load_selection(
            console,
            fixtures or [],
            no_default_fixtures,
            _Choice(only, ids_from, touched, category or [], expressions, parsed_shard),
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
    _show_run(console, result, _write_reports(to_document(result, info), reports))
    if update_failures and not result.interrupted:
        _update_failures(result, known, corpus_ids, console)
    if write_failures is not None and not result.interrupted:
        _write_failures(result, write_failures, console)
    _finish(result)


class _Choice(NamedTuple):
    """What `run` selects by: listed ids, changed fixtures, categories, -k and the shard."""

    only: set[str] | None
    ids_from: Path | None
    touched: set[str] | None
    categories: list[str]
    expressions: list
    shard: object


def _load_selection(
    console, fixtures: list[Path], no_default: bool, choice: _Choice, chosen_variants
) -> tuple[list, list, set[str]]:
    """Load only the fixture files the choice can select; (selected cases, the selection
    before sharding, every fixture id found)."""
    files = _fixture_paths(fixtures, not no_default)
    _note_unused_fixtures(console, fixtures, no_default)
    found = fixture_files(files)
    named = {Path(os.path.abspath(path)) for path in fixtures}
    drafts = [  # a `fixtures record` draft beside the fixtures: not one until reviewed
        path
        for path in found
        if path.name.endswith(RECORDED_SUFFIX) and Path(os.path.abspath(path)) not in named
    ]
    if drafts:
        console.print(
            f"note: {len(drafts)} recorded draft(s) not run ({drafts[0]}"
            f"{' and more' if len(drafts) > 1 else ''}): review each expect, then save it as "
            "<id>.json",
            markup=False,
            highlight=False,
        )
    all_ids = {path.stem for path in found if path not in drafts}
    if choice.ids_from is not None and choice.only is not None:
        unknown = sorted(i for i in choice.only if i.partition("@")[0] not in all_ids)
        if unknown:
            raise UsageProblem(
                f"--ids-from {choice.ids_from}: {unknown[0]} is no fixture ({len(unknown)} unknown)"
            )

    only, touched, categories = choice.only, choice.touched, choice.categories
    wanted_ids = None if only is None else {ident.partition("@")[0] for ident in only}

    def chosen(path: Path) -> bool:  # id and category come from the path (the loader checks)
        if path in drafts:
            return False
        if wanted_ids is not None and path.stem not in wanted_ids:
            return False
        if touched is not None and path.stem not in touched:
            return False
        if categories and path.parent.name not in categories:
            return False
        return all(rule.matches(path.stem, path.parent.name) for rule in choice.expressions)

    corpus = load_fixtures(files, only=chosen)
    keywords = choice.expressions
    unsharded = select(corpus, keywords=keywords, categories=categories)
    selected = select(corpus, keywords=keywords, categories=categories, shard=choice.shard)
    selected = with_variants(selected, chosen_variants, sample_from=unsharded)
    if only is not None:
        selected = [case for case in selected if rerun.wanted(case.id, only)]
    return selected, unsharded, all_ids


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


def _since(version: str, console) -> set[str]:
    """`run --since`: the fixture ids CHANGELOG.md names as added or changed after `version`."""
    from fakepeer.authoring.changelog import ChangelogError
    from fakepeer.authoring.changes import fixtures_since

    try:
        touched, removed = fixtures_since(version)
    except ChangelogError as exc:
        raise UsageProblem(f"--since: {exc}") from None
    gone = f"; {len(removed)} removed since, not run" if removed else ""
    console.print(
        f"--since {version}: {len(touched)} fixture(s) added or changed since{gone}",
        markup=False,
        highlight=False,
    )
    return touched


def _check_positive(option: str, seconds: float) -> None:
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        raise UsageProblem(
            f"{option} takes a number of seconds above 0 and at most {MAX_SECONDS:g}, "
            f"got {seconds:g}"
        )


def _check_outputs(paths: dict[str, Path], *more: Path | None) -> None:
    """Refuse unwritable report paths before the run starts, so no result is lost to them."""
    for path in (*paths.values(), *more):
        if path is None:
            continue
        try:
            atomic.check_writable(path)
        except OSError as exc:
            raise UsageProblem(f"cannot write {path}: {exc}") from None


def _parse_shard(text: str | None) -> Shard | None:
    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None


def _parse_keywords(texts: list[str]) -> list[Keywords]:
    try:
        return [Keywords.parse(text) for text in texts]
    except KeywordError as exc:
        raise UsageProblem(str(exc)) from None


def _note_unused_fixtures(console: Console, extra: list[Path], no_default: bool) -> None:
    """Outside a checkout, a `./fixtures` folder (where `fixtures new` writes there) is not the
    active root's: say so rather than run without it silently."""
    root = active_root()
    own = Path.cwd() / "fixtures"
    if no_default or root.source == "checkout" or not own.is_dir():
        return
    if own.resolve() == root.fixtures.resolve():
        return
    for path in map(Path, map(os.path.abspath, extra)):
        if path == own or own in path.parents or path in own.parents:
            return
    console.print(
        f"note: ./fixtures is not part of this run (the corpus is {root.fixtures}); add your own "
        "fixtures with --fixtures fixtures",
        markup=False,
        highlight=False,
    )


def _fixture_paths(extra: list[Path], include_default: bool) -> list[Path]:
    """The files and folders `run` loads fixtures from."""
    paths = list(extra)
    if not include_default:  # the root is not consulted (nor announced) when it is not used
        if not paths:
            raise UsageProblem("no fixtures to load: --no-default-fixtures and no --fixtures given")
        return paths
    default = default_fixture_dir()
    if default.is_dir():
        paths.insert(0, default)
    if not paths:
        raise UsageProblem(f"no fixtures to load: {default} does not exist and no --fixtures given")
    return paths


def _only_ids(ids_from: Path | None, last_failed: bool) -> set[str] | None:
    """The ids --ids-from and --last-failed restrict the run to (None: no restriction)."""
    only: set[str] | None = None
    try:
        if ids_from is not None:
            only = rerun.read_ids(ids_from)
        if last_failed:
            failed = rerun.read_last_failed(default_fixture_dir())
            if not failed:
                print("--last-failed: no failures recorded here; running the whole selection")
            else:
                only = failed if only is None else only & failed
    except rerun.RerunError as exc:
        raise UsageProblem(str(exc)) from None
    return only


def _read_known(specs: list[str], labels: list[str]) -> known_lists.KnownFailures:
    try:
        return known_lists.read_lists(specs, labels)
    except known_lists.KnownFailuresError as exc:
        raise UsageProblem(str(exc)) from None


def _write_reports(document: dict, paths: dict[str, Path]) -> tuple[list[str], list[str]]:
    """The one output loop of `run` and `merge`: every asked-for format, from the document,
    written before anything else is printed (a console that fails cannot cost a report).
    Returns what was written and what could not be, as lines to print."""
    wrote, failed = [], []
    for reporter in reporters():
        path = paths.get(reporter.name)
        if path is None:
            continue
        try:
            reporter.write(document, path)
        except OSError as exc:
            failed.append(f"cannot write {reporter.noun} to {path}: {exc}")
            continue
        wrote.append(f"wrote {reporter.noun} to {path}")
        _REPORTS_WRITTEN.append(path)
    return wrote, failed


#: Report files this command wrote: with them, a console that failed costs no verdict.
_REPORTS_WRITTEN: list[Path] = []


def _show_run(console, result: RunResult, written: tuple[list[str], list[str]]) -> None:
    """The console's account of a run whose reports are written; a report that could not be
    written is then the usage error (exit 2) it always was."""
    print_run(console, result)
    wrote, failed = written
    for line in wrote:
        console.print(line, markup=False)
    if failed:
        raise UsageProblem("; ".join(failed))


def _update_failures(
    result: RunResult, known: known_lists.KnownFailures, corpus_ids: set[str], console
) -> None:
    try:
        written = known_lists.update(result, known, corpus_ids)
    except known_lists.KnownFailuresError as exc:
        raise UsageProblem(str(exc)) from None
    for path in written:
        console.print(f"updated the known failures in {path}", markup=False)


def _write_failures(result: RunResult, path: Path, console) -> None:
    sections = known_lists.failures_of(result)
    header = (
        f"Known failures written by ryusen-conform on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
        f"SDK: {', '.join(sdk.label for sdk in result.sdks)}"
    )
    try:
        known_lists.write_atomically(path, known_lists.format_lists(sections, header))
    except known_lists.KnownFailuresError as exc:
        raise UsageProblem(f"cannot write --write-failures: {exc}") from None
    count = sum(len(ids) for ids in sections.values())
    console.print(f"wrote {count} failure(s) to {path}", markup=False)


def _finish(result: RunResult, floor: int = 0, blockers: Sequence[str] = ()) -> None:
    """The closing lines and the exit status: never greener than `floor` (what merged shards
    exited with); each of `blockers` (and a case not run) keeps the run from passing."""
    sys.stderr.flush()
    sys.stdout.flush()
    for problem in result.list_problems:
        tag = "warning" if result.lenient else "error"
        print(f"known failures: {tag}: {problem}", flush=True)
    if result.interrupted and interrupts.announce():
        not_run = sum(case.not_run for sdk in result.sdks for case in sdk.results)
        _say(
            f"interrupted by {interrupts.first_signal()}: {not_run} case(s) not run (errors "
            "marked not_run in the reports); every SDK process was stopped"
        )
    internal = sum(case.internal for sdk in result.sdks for case in sdk.results)
    if internal:
        _say(
            f"the bench itself failed on {internal} case(s) (see `internal error` in "
            "their reasons); this run is no verdict: please report it"
        )
    cut = [
        case
        for sdk in result.sdks
        for case in sdk.results
        if case.not_run and case.reason != MISSING_REASON  # merge says those itself
    ]
    if cut and not result.interrupted:
        bounds = [b for b in ("--max-time", "--maxfail") if any(b in c.reason for c in cut)]
        blockers = [
            *blockers,
            f"{len(cut)} case(s) not run ({' and '.join(bounds) or 'a bound'} reached): no "
            "verdict on them, so the run cannot pass; they are in no failure list",
        ]
    for blocker in blockers:
        _say(blocker)
    print(result.summary(), flush=True)
    status = max(result.exit_status(), floor)
    raise typer.Exit(max(status, 1) if blockers else status)


# ----------------------------------------------------------------------------- schema


@app.command()
def schema(
    out: Annotated[
        Path, typer.Option("--out", help="Folder to write the JSON Schemas into.", metavar="DIR")
    ],
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
            atomic.write_bytes(target, source.read_bytes())
            written.append(target)
    except OSError as exc:
        raise UsageProblem(f"cannot write schemas to {out}: {exc}") from None
    print(f"wrote {len(written)} schemas to {out}")


# ----------------------------------------------------------------------------- merge


@app.command()
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
    _check_outputs(reports)
    try:
        merged = merge_documents(shards, allow_partial=allow_partial, allow_mixed=allow_mixed)
    except ReportError as exc:
        raise UsageProblem(str(exc)) from None
    result = merged.run
    result.strict = result.strict or strict
    info = RunInfo(catalog=merged.catalog, selection=merged.selection, corpus=merged.corpus)
    _show_run(console, result, _write_reports(to_document(result, info), reports))
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
    _finish(result, floor=worst, blockers=missing)


# ----------------------------------------------------------------------------- fixtures sub-app
# The authoring commands (`ryusen-conform fixtures validate`, `matrix`, `coverage`) and `fuzz`
# live with their packages and are mounted here.
from fakepeer.authoring.changes import register_commands as register_changes  # noqa: E402
from fakepeer.authoring.cli import fixtures_app, register_commands  # noqa: E402
from fakepeer.fuzz.cli import register_commands as register_fuzz_commands  # noqa: E402
from fakepeer.server.simulate import register_commands as register_simulate_commands  # noqa: E402

app.add_typer(fixtures_app, name="fixtures")
register_commands(app)
register_fuzz_commands(app)
register_simulate_commands(app)
register_changes(app)


# ----------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: usage, fixture and report errors are one paragraph, exit status 2.
    Called as the program (no `argv`), threads an in-process host left cannot hold it."""
    _REPORTS_WRITTEN.clear()
    try:
        interrupts.install()
        interrupts.pending()  # a signal during the imports whose interrupt was swallowed
        sys.stdout = PipeSafeStream(sys.stdout)  # `run | head -1` must not cost the reports
        if not isinstance(sys.stderr, PipeSafeStream):  # nor a host closing it, a dump
            sys.stderr = PipeSafeStream(sys.stderr)
        command = typer.main.get_command(app)
        _plain_help(command)
        args = bare_shuffle_argv(sys.argv[1:] if argv is None else argv)
        command.main(args=args, prog_name="ryusen-conform", standalone_mode=True)
        status = 0
    except SystemExit as exc:  # typer reports usage errors itself (exit status 2)
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
        if status == EXIT_INTERRUPTED and interrupts.received():  # typer's silent Exit(130)
            _say_interrupted("every SDK process was stopped")
    except (UsageProblem, RootError) as exc:
        _say(str(exc))
        status = EXIT_USAGE
    except FixtureError as exc:
        count = len(exc.problems)
        _say(f"{count} fixture problem(s); nothing was run:\n" + "\n".join(map(str, exc.problems)))
        status = EXIT_USAGE
    except BaseException as exc:  # a KeyboardInterrupt, or an error Python wrapped one in
        if not (isinstance(exc, KeyboardInterrupt) or interrupts.caused_by_signal(exc)):
            raise
        close_all()
        _say_interrupted("every SDK process was stopped")
        status = EXIT_INTERRUPTED
    finally:
        close_all()
    with contextlib.suppress(Exception):
        sys.stdout.flush()  # what is still buffered fails now, not after the status is decided
    error = getattr(sys.stdout, "error", None)
    if error is not None:
        _say(
            f"standard output failed ({error}): what this command printed is lost (reports "
            "written to files are not)"
        )
        if status == 0 and not _REPORTS_WRITTEN:  # a listing, a timeline or a summary that
            status = EXIT_USAGE  # nobody got is no success; a run's report still holds it
    if argv is None:
        interrupts.settle()
        exiting_with(int(status))
    return int(status)


#: One metavar per kind of value, for options that name none (every command mounts its own
#: options; `--sdk CMD` everywhere, never `--sdk SDK`, `--output OUTPUT` or `--wait WAIT`).
METAVARS = {
    "sdk": "CMD",
    "out": "PATH",
    "output": "PATH",
    "fixtures": "PATH",
    "source": "FILE",
    "directory": "DIR",
    "category": "NAME",
    "wait": "SECONDS",
    "timeout": "SECONDS",
    "max_time": "SECONDS",
    "examples": "N",
    "seed": "N",
    "whole_runs": "N",
    "max_invocations": "N",
    "event": "AT=NAME:PAYLOAD",
    "fault": "SPEC",
    "ambient": "KEY=VALUE",
    "worker": "SPEC",
    "paths": "PATH",
}


def _plain_help(command: object) -> None:
    """Help that names values as people do: `--out PATH`, never `<path>`, `<list[str]>` or
    `<float range> [x>=0.001]` (typer's type labels), and a required argument as `ID`, not
    `{ID}`; ranges are still enforced."""
    for param in getattr(command, "params", ()):
        if param.metavar is None and param.name in METAVARS and not getattr(param, "is_flag", 0):
            param.metavar = METAVARS[param.name]
        if getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = lambda ctx: None
            name = param.metavar or param.name.upper()
            usage = (name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else "")
            param._usage_display_name = lambda usage=usage: usage  # typer 0.29's usage line
            param.get_usage_pieces = lambda ctx, usage=usage: [usage]  # and typer 0.28's
        else:
            label = param.metavar or param.name.upper()
            param.display_type_rich = lambda ctx, label=label: label
        param._get_number_range_help_str = lambda: None
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


def _say_interrupted(consequence: str) -> None:
    """The one line saying a signal ended the command (once, however many paths see it)."""
    if interrupts.announce():
        _say(f"interrupted by {interrupts.first_signal()}; {consequence}")


def _say(message: str) -> None:
    print(
        f"ryusen-conform: error: {message}"
        if not message.startswith("interrupted")
        else f"ryusen-conform: {message}",
        file=sys.stderr,
    )
