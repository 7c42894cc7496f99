"""How a command ends: the one output loop `run` and `merge` share (every asked-for report
written from the JSON document before anything is printed), the known-failure lists a run
rewrites, the closing lines and the exit status, and the one-line error messages.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fakepeer import interrupts
from fakepeer.cli.options import UsageProblem
from fakepeer.report import print_run, reporters
from fakepeer.report.merge import MISSING_REASON
from fakepeer.session import RunResult
from fakepeer.suite import known_failures as known_lists

if TYPE_CHECKING:
    from rich.console import Console


#: Report files this command wrote: with them, a console that failed costs no verdict.
REPORTS_WRITTEN: list[Path] = []


def write_reports(document: dict, paths: dict[str, Path]) -> tuple[list[str], list[str]]:
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
        REPORTS_WRITTEN.append(path)
    return wrote, failed


def show_run(console: Console, result: RunResult, written: tuple[list[str], list[str]]) -> None:
    """The console's account of a run whose reports are written; a report that could not be
    written is then the usage error (exit 2) it always was."""
    print_run(console, result)
    wrote, failed = written
    for line in wrote:
        console.print(line, markup=False)
    if failed:
        raise UsageProblem("; ".join(failed))


def update_failures(
    result: RunResult, known: known_lists.KnownFailures, corpus_ids: set[str], console: Console
) -> None:
    """`run --update-failures`: rewrite the --known-failures lists to this run's failures."""
    try:
        written = known_lists.update(result, known, corpus_ids)
    except known_lists.KnownFailuresError as exc:
        raise UsageProblem(str(exc)) from None
    for path in written:
        console.print(f"updated the known failures in {path}", markup=False)


def write_failures(result: RunResult, path: Path, console: Console) -> None:
    """`run --write-failures PATH`: this run's failures as a new known-failures list."""
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


def finish(result: RunResult, floor: int = 0, blockers: Sequence[str] = ()) -> None:
    """The closing lines and the exit status: never greener than `floor` (what merged shards
    exited with); each of `blockers` (and a case not run) keeps the run from passing."""
    sys.stderr.flush()
    sys.stdout.flush()
    for problem in result.list_problems:
        tag = "warning" if result.lenient else "error"
        print(f"known failures: {tag}: {problem}", flush=True)
    if result.interrupted and interrupts.announce():
        not_run = sum(case.not_run for sdk in result.sdks for case in sdk.results)
        say(
            f"interrupted by {interrupts.first_signal()}: {not_run} case(s) not run (errors "
            "marked not_run in the reports); every SDK process was stopped"
        )
    internal = sum(case.internal for sdk in result.sdks for case in sdk.results)
    if internal:
        say(
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
        say(blocker)
    print(result.summary(), flush=True)
    status = max(result.exit_status(), floor)
    raise typer.Exit(max(status, 1) if blockers else status)


def say_interrupted(consequence: str) -> None:
    """The one line saying a signal ended the command (once, however many paths see it)."""
    if interrupts.announce():
        say(f"interrupted by {interrupts.first_signal()}; {consequence}")


def say(message: str) -> None:
    """One line on stderr, `ryusen-conform: error: ...` (or `ryusen-conform: interrupted ...`)."""
    print(
        f"ryusen-conform: error: {message}"
        if not message.startswith("interrupted")
        else f"ryusen-conform: {message}",
        file=sys.stderr,
    )
