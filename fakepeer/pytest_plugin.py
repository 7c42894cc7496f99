"""pytest plugin: the conformance fixtures as pytest items, for SDK teams that gate in pytest.

Registered through the `pytest11` entry point and inactive unless `--ryusen-sdk CMD` is given.
Then every fixture becomes one item named by its id (`ryusen-conform::values.i64-max`), so `-k`,
`-x`, `--junitxml` and pytest-xdist's `-n` work as for any test. Each pytest process (each
xdist worker) starts one SDK session and runs its items through it, as `ryusen-conform run`
does; a failing item shows the same text as the CLI's failure line and diff.

An SDK command that cannot start, a bad --ryusen-variants or an unreadable list is one usage
error (exit status 4) before any item runs. `--ryusen-known-failures FILE` turns listed failures
into xfail, a listed pass into a failure and a listed id that is no fixture into the failing item
`ryusen-conform::known-failures`, so the plugin path cannot end green on a stale list either.
The rootdir and ini file are the invoking project's, not the SDK folder's.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

_RUNNER = pytest.StashKey["_SdkRunner"]()
_KNOWN = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ryusen-conform", "Ryusen conformance fixtures as test items")
    group.addoption(
        "--ryusen-sdk",
        metavar="CMD",
        default=None,
        help="Run every conformance fixture against this conformance host command "
        "(a relative path is resolved from the current folder). Without it the plugin is idle.",
    )
    group.addoption(
        "--ryusen-fixtures",
        metavar="PATH",
        action="append",
        default=[],
        help="A fixture file or folder to add (repeatable).",
    )
    group.addoption(
        "--ryusen-no-default-fixtures",
        action="store_true",
        default=False,
        help="Only the --ryusen-fixtures, not the corpus of the checkout (or the bundled one).",
    )
    group.addoption(
        "--ryusen-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="Seconds allowed per case (default: as `ryusen-conform run`).",
    )
    group.addoption(
        "--ryusen-known-failures",
        metavar="FILE",
        action="append",
        default=[],
        help="Fixture ids expected to fail (as `run --known-failures`; repeatable): a listed "
        "failure is xfail, a listed pass fails its item, a listed id that is no fixture fails "
        "the item ryusen-conform::known-failures.",
    )
    group.addoption(
        "--ryusen-variants",
        metavar="all|none|NAME,...",
        default="none",
        help="Derived variants to run besides each fixture (as `run --variants`).",
    )
    group.addoption(
        "--ryusen-strict",
        action="store_true",
        default=False,
        help="Warnings (differences in recommended parts, failures of recommended-level "
        "fixtures) fail their item (as `run --strict`).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Check the options once, before any item runs: a bad one is one usage error (exit 4)."""
    config.addinivalue_line("markers", "ryusen_conform: a Ryusen conformance fixture")
    command = config.getoption("ryusen_sdk", None)
    if not command:
        return
    from fakepeer.cases.variants import parse_variants
    from fakepeer.session import targets_from_options
    from fakepeer.suite import known_failures

    try:
        targets_from_options([command])
    except Exception as exc:  # CommandError: not startable; one line, not a traceback
        raise pytest.UsageError(f"--ryusen-sdk {command}: {exc}") from None
    try:
        parse_variants(config.getoption("ryusen_variants"))
    except ValueError as exc:
        raise pytest.UsageError(f"--ryusen-variants: {exc}") from None
    try:
        config.stash[_KNOWN] = known_failures.read_lists(
            config.getoption("ryusen_known_failures"), [command]
        )
    except known_failures.KnownFailuresError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: Any, args: Any) -> None:
    """The rootdir (and ini file) of the invoking project, not of the SDK's folder.

    pytest picks its rootdir before plugins add their options, so `--ryusen-sdk ./sdk/conform`
    made `./sdk/conform` look like a test path. Now that the option is known, choose again
    from the real test paths (unless --rootdir or -c chose already).
    """
    namespace = early_config.known_args_namespace
    if not getattr(namespace, "ryusen_sdk", None) or namespace.rootdir or namespace.inifilename:
        return
    try:
        from _pytest.config.findpaths import determine_setup

        rootpath, inipath, inicfg, ignored = determine_setup(
            inifile=None,
            override_ini=namespace.override_ini,
            args=list(namespace.file_or_dir),
            rootdir_cmd_arg=None,
            invocation_dir=early_config.invocation_params.dir,
        )
        if rootpath == early_config.rootpath:
            return
        wrong = list(early_config.getini("addopts"))  # the SDK folder's ini put them in args
        if wrong and args[: len(wrong)] == wrong:
            del args[: len(wrong)]
        early_config._rootpath = rootpath
        early_config._inipath = inipath
        early_config._inicfg = inicfg
        early_config._ignored_config_files = ignored
        early_config._inicache.clear()
        namespace.confcutdir = str(inipath.parent if inipath is not None else rootpath)
        args[:0] = list(early_config.getini("addopts"))
    except (ImportError, AttributeError, TypeError, ValueError):
        return  # another pytest: its own choice stands (`--ryusen-sdk=CMD` avoids it)


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    command = config.getoption("ryusen_sdk")
    if not command:
        return
    suite = ConformanceSuite.from_parent(session, name="ryusen-conform", nodeid="ryusen-conform")
    collected = suite.collect()
    # counted as collected (so the header says `collected N items`, never `-495 selected`)
    report = pytest.CollectReport(suite.nodeid, "passed", None, collected)
    config.hook.pytest_collectreport(report=report)
    items.extend(collected)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session: pytest.Session):  # type: ignore[no-untyped-def]
    """After the last item: listen for a late copy of an answer, then fail every item that was
    reported passed before its second answer arrived (as `run` marks that case an error)."""
    yield
    runner = session.config.stash.get(_RUNNER, None)
    if runner is None:
        return
    runner.close()
    strict = session.config.getoption("ryusen_strict")
    for nodeid, location, case in runner.answered_twice(strict):
        report = pytest.TestReport(
            nodeid=f"{nodeid}[answered-twice]",
            location=location,
            keywords={},
            outcome="failed",
            longrepr=case_text(case, strict),
            when="call",
        )
        session.config.hook.pytest_runtest_logreport(report=report)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session):  # type: ignore[no-untyped-def]
    """Stop the SDK; once every plugin has finished, pass pytest's exit status on, so that a
    thread an in-process host (`--ryusen-sdk python:...`) left cannot hold pytest for ever."""
    runner = session.config.stash.get(_RUNNER, None)
    if runner is not None:
        runner.close()
    yield
    if runner is not None:
        from fakepeer.transport.inprocess import exiting_with

        exiting_with(int(session.exitstatus))


class ConformanceSuite(pytest.Collector):
    """Every selected fixture, sorted by id (the same list in every xdist worker)."""

    def collect(self) -> list[pytest.Item]:
        from fakepeer.cases import FixtureError, default_fixture_dir, load_fixtures

        config = self.config
        paths = [Path(p) for p in config.getoption("ryusen_fixtures")]
        if not config.getoption("ryusen_no_default_fixtures"):
            paths.insert(0, default_fixture_dir())
        if not paths:
            raise pytest.UsageError("--ryusen-no-default-fixtures needs --ryusen-fixtures PATH")
        try:
            fixtures = load_fixtures(paths)
        except FixtureError as exc:
            problems = "\n".join(str(problem) for problem in exc.problems)
            raise pytest.UsageError(f"ryusen-conform: fixture problems:\n{problems}") from None
        from fakepeer.cases.variants import parse_variants, with_variants
        from fakepeer.suite import known_failures

        chosen = with_variants(fixtures, parse_variants(config.getoption("ryusen_variants")))
        items: list[pytest.Item] = [
            FixtureItem.from_parent(self, name=f.id, fixture=f) for f in chosen
        ]
        known = config.stash.get(_KNOWN, None)
        if known:
            ids = {f.id for f in fixtures} | {f.id for f in chosen}
            problems = known_failures.problems(known, ids)
            if problems:
                items.append(
                    ListProblems.from_parent(self, name="known-failures", problems=problems)
                )
        return items


class ListProblems(pytest.Item):
    """The --ryusen-known-failures problems (an id that names no fixture): one failing item."""

    def __init__(self, *, problems: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = problems

    def runtest(self) -> None:
        raise CaseFailed("\n".join(f"known failures: error: {p}" for p in self.problems))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:  # type: ignore[override]
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return "", None, "ryusen-conform known-failures"


class CaseFailed(Exception):
    """An item's case failed or errored; `text` is the CLI's report of it."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class FixtureItem(pytest.Item):
    """One fixture run against the SDK of `--ryusen-sdk`."""

    def __init__(self, *, fixture: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixture = fixture
        self.add_marker("ryusen_conform")
        self.user_properties.append(("rule", f"{fixture.rule.section}: {fixture.rule.quote}"))

    def runtest(self) -> None:
        from fakepeer.session.outcomes import Outcome, apply_known_failure

        strict = self.config.getoption("ryusen_strict")
        case = _runner(self.config).run(self.fixture, self)
        known = self.config.stash.get(_KNOWN, None)
        listed = known.for_sdk(self.config.getoption("ryusen_sdk")) if known else None
        case.outcome = apply_known_failure(
            case.raw_outcome, bool(listed) and case.id in listed.entries, strict and case.warned
        )
        if case.outcome is Outcome.SKIP:
            pytest.skip(case.reason)
        if case.outcome is Outcome.XFAIL:
            pytest.xfail(f"known failure: {case.reason}")
        if case.outcome is Outcome.XPASS:
            raise CaseFailed(f"XPASS {case.id}: listed as a known failure but passed")
        if case.fails_run(strict):
            raise CaseFailed(case_text(case, strict))
        if case.is_warning(strict):  # recommended parts differ, or a recommended-level error
            import warnings

            warnings.warn(case_text(case, strict), pytest.PytestWarning, stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, CaseFailed):
            return excinfo.value.text
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.fixture.path or "", None, f"ryusen-conform {self.fixture.id}"


def case_text(case: Any, strict: bool) -> str:
    """The console report of one case, exactly as `ryusen-conform run` prints it, uncoloured."""
    from rich.console import Console

    from fakepeer.report.console import print_case

    buffer = io.StringIO()
    console = Console(file=buffer, no_color=True, highlight=False, width=10_000, soft_wrap=True)
    print_case(console, case, strict)
    return buffer.getvalue().rstrip("\n")


class _SdkRunner:
    """The one SDK session of this pytest process (this xdist worker)."""

    def __init__(self, command: str, timeout: float | None) -> None:
        from fakepeer.compare import Comparer
        from fakepeer.session import targets_from_options
        from fakepeer.session.sdk import SdkSession
        from fakepeer.suite import DEFAULT_CASE_TIMEOUT

        try:
            (target,) = targets_from_options([command])
        except Exception as exc:  # CommandError: not startable; one line, not a traceback
            raise pytest.UsageError(f"--ryusen-sdk {command}: {exc}") from None
        self.session = SdkSession(target.factory, None)
        self.comparer = Comparer(None)
        self.timeout = timeout if timeout is not None else DEFAULT_CASE_TIMEOUT

        #: Every item run, with its result: a result a later answer turns into an error after
        #: its item passed is failed again at the end (`answered_twice`).
        self.items: list[tuple[str, tuple, Any, Any]] = []
        self.closed = False

    def run(self, fixture: Any, item: pytest.Item) -> Any:
        from fakepeer.session.case import run_case

        player = None
        if fixture.lifecycle is not None:  # the model server plays it: imported only then
            from fakepeer.server.lifecycle import play_lifecycle as player
        case = run_case(
            self.session,
            fixture,
            timeout=self.timeout,
            comparer=self.comparer,
            lifecycle_player=player,
        )
        self.items.append((item.nodeid, item.location, case, case.raw_outcome))
        return case

    def answered_twice(self, strict: bool) -> list[tuple[str, tuple, Any]]:
        """Items whose case turned into an error after they were reported (a late copy)."""
        from fakepeer.session.outcomes import Outcome

        return [
            (nodeid, location, case)
            for nodeid, location, case, reported in self.items
            if reported in (Outcome.PASS, Outcome.SKIP)
            and case.raw_outcome is Outcome.ERROR
            and case.fails_run(strict)
        ]

    def close(self) -> None:
        """Listen for a late copy of the last answers (blamed on their owner), then stop."""
        if self.closed:
            return
        self.closed = True
        from fakepeer.suite.runner import check_late_frame

        try:
            check_late_frame(self.session)
        finally:
            self.session.shutdown()


def _runner(config: pytest.Config) -> _SdkRunner:
    runner = config.stash.get(_RUNNER, None)
    if runner is None:
        runner = _SdkRunner(config.getoption("ryusen_sdk"), config.getoption("ryusen_timeout"))
        config.stash[_RUNNER] = runner
    return runner
