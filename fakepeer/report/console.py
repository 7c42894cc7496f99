"""Terminal output: a progress bar while running (TTY only) and the final tables and details."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fakepeer.report.fleet import fleet_lines
from fakepeer.report.groups import group_cases
from fakepeer.report.missing import missing_pieces
from fakepeer.report.tally import Cell, Status, build_tally
from fakepeer.session.outcomes import DETAILED, INVARIANT_NOTE, OUTCOME_ORDER, Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun
from fakepeer.session.targets import SdkTarget

_STDERR_LINES = 20
_STYLE = {
    "pass": "green",
    "fail": "red",
    "error": "red bold",
    "skip": "yellow",
    "xfail": "cyan",
    "xpass": "magenta",
}
_STATUS_STYLE = {
    Status.PASS: "green",
    Status.FAIL: "red bold",
    Status.WARN: "yellow",
    Status.SKIP: "cyan",
    Status.EMPTY: "dim",
}


def make_console() -> Console:
    return Console(highlight=False, soft_wrap=True)


#: Seconds between progress lines when stdout is no terminal (a CI log): $RYUSEN_CONFORM_PROGRESS
#: sets it (0 turns the lines off).
PROGRESS_SECONDS = 10.0


def _progress_seconds() -> float:
    try:
        return float(os.environ.get("RYUSEN_CONFORM_PROGRESS", PROGRESS_SECONDS))
    except ValueError:
        return PROGRESS_SECONDS


class LogProgress:
    """Without a terminal, one line per SDK at a steady rate on stderr (`progress: LABEL:
    120/521 cases, 2 failing, 12 s`), so a CI log shows a run is alive, and where it hangs."""

    def __init__(self, targets: Sequence[SdkTarget], total: int, seconds: float) -> None:
        self.total, self.seconds = total, seconds
        self.done = {target.label: 0 for target in targets}
        self.failing = dict.fromkeys(self.done, 0)
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="conform-progress", daemon=True)

    def start(self) -> None:
        if self.seconds > 0 and self.total > 0:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def advance(self, label: str, failed: bool) -> None:
        self.done[label] += 1
        self.failing[label] += failed

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            elapsed = time.monotonic() - self.started
            unfinished = [label for label, done in self.done.items() if done < self.total]
            running = [label for label in unfinished if self.done[label]] or unfinished[:1]
            for label in running:
                done = self.done[label]
                if done < self.total:
                    print(
                        f"progress: {label}: {done}/{self.total} cases, "
                        f"{self.failing[label]} failing, {elapsed:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )


class RunProgress:
    """A rich progress bar per SDK when stdout is a terminal; otherwise steady log lines."""

    def __init__(self, console: Console, targets: Sequence[SdkTarget], total: int) -> None:
        self.enabled = sys.stdout.isatty() and total > 0
        self._log = None if self.enabled else LogProgress(targets, total, _progress_seconds())
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failing"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks = {}
        self._lock = threading.Lock()
        if self.enabled:
            for target in targets:
                self._tasks[target.label] = self._progress.add_task(
                    escape(target.label), total=total, failed=0
                )

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self._progress.start()
        elif self._log is not None:
            self._log.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.enabled:
            self._progress.stop()
        elif self._log is not None:
            self._log.stop()

    def advance(self, target: SdkTarget, result: CaseResult) -> None:
        if not self.enabled:
            if self._log is not None:
                self._log.advance(target.label, result.outcome in (Outcome.FAIL, Outcome.ERROR))
            return
        with self._lock:
            task = self._tasks[target.label]
            failed = self._progress.tasks[task].fields["failed"]
            if result.outcome in (Outcome.FAIL, Outcome.ERROR):
                failed += 1
            self._progress.update(task, advance=1, failed=failed)


def print_run(console: Console, run: RunResult) -> None:
    """Per SDK: the category x outcome table, then every failing case with its diff and stderr.

    With several SDKs, one categories x SDKs table follows, so they can be compared at a glance.
    """
    for sdk in run.sdks:
        _print_sdk(console, sdk, run)
    if len(run.sdks) > 1:
        print_tally(console, run)
    for line in fleet_lines(run):
        console.print(escape(line))


def print_tally(console: Console, run: RunResult) -> None:
    """Categories (rows) by SDKs (columns); `26/26` when all pass, else the other outcomes too."""
    tally = build_tally(run)
    table = Table(show_edge=False, pad_edge=False, title="categories x SDKs", title_justify="left")
    table.add_column("category")
    headers = list(tally.sdks)
    widest = max((len(c) for c in tally.categories), default=8) + 3
    if widest + sum(len(label) + 3 for label in headers) > console.width:
        # labels too long for the width would be cut to the same `…/runners/…`: number them
        headers = [f"SDK {n}" for n in range(1, len(headers) + 1)]
        for header, label in zip(headers, tally.sdks, strict=True):
            console.print(f"{header}: {escape(label)}")
    for label in headers:
        table.add_column(escape(label), justify="right")
    for category in tally.categories:
        cells = (_tally_cell(tally.cell(category, sdk)) for sdk in tally.sdks)
        table.add_row(escape(category), *cells)
    table.add_row(
        "[bold]total[/bold]",
        *(_tally_cell(tally.totals[sdk], bold=True) for sdk in tally.sdks),
    )
    console.print(table)
    console.print()


def _tally_cell(cell: Cell, bold: bool = False) -> str:
    style = _STATUS_STYLE[cell.status] + (" bold" if bold else "")
    return f"[{style}]{escape(cell.text)}[/]"


def _print_sdk(console: Console, sdk: SdkRun, run: RunResult) -> None:
    caps = ", ".join(sdk.capabilities) if sdk.capabilities is not None else "never registered"
    console.print(
        f"[bold]SDK[/bold] {escape(sdk.label)}  [dim](capabilities: {escape(caps)}; "
        f"{sdk.starts} process start(s); {sdk.duration:.2f} s)[/dim]"
    )
    for problem in sdk.handshake_problems:
        console.print(f"  [yellow]register frame: {escape(problem)}[/yellow]")
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("category")
    for outcome in OUTCOME_ORDER:
        table.add_column(outcome.value, justify="right", style=_STYLE[outcome.value])
    tally = build_tally(run)
    for category in tally.categories:
        counts = tally.cell(category, sdk.label).counts
        if any(counts.values()):
            table.add_row(category, *(_cell(counts[o.value]) for o in OUTCOME_ORDER))
    tally = sdk.counts()
    table.add_row("[bold]total[/bold]", *(f"[bold]{tally[o.value]}[/bold]" for o in OUTCOME_ORDER))
    console.print(table)
    for piece in missing_pieces(sdk.results):
        console.print(f"[red]MISSING[/red] {escape(piece.line())}")
    detailed = (
        case
        for case in sdk.results
        if (case.outcome in DETAILED or case.warned)
        and not case.not_run
        and not (case.missing and not case.findings)
    )
    for group in group_cases(detailed):
        if group.rolled_up:
            console.print(
                f"[bold]{len(group.cases)} cases[/bold]: {escape(group.first.outcome.value)}: "
                f"{escape(group.first.reason)}"
            )
        print_case(console, group.first, run.strict, run.lenient)
        if group.rolled_up:
            console.print(f"    [dim]the same for: {escape(group.others())}[/dim]")
    not_run = [case for case in sdk.results if case.not_run]
    if not_run:  # one line, whatever their number (Ctrl-C, --maxfail, --max-time)
        why = not_run[0].reason.removeprefix("not run: ")
        console.print(f"[yellow]{len(not_run)} case(s) not run[/yellow]: {escape(why)}")
    console.print()


def _cell(count: int) -> str:
    return str(count) if count else "[dim]0[/dim]"


def print_case(console: Console, case: CaseResult, strict: bool, lenient: bool = False) -> None:
    """One failing, erroring, xpass or warning case: its line, its diff and its stderr tail."""
    if case.outcome is Outcome.XPASS:
        label = "XPASS" + (" (reported; --lenient keeps the run green)" if lenient else "")
        console.print(
            f"[magenta]{label}[/magenta] {escape(case.id)}: listed as a known failure but passed"
        )
        return
    warning = case.is_warning(strict) or case.warned
    tag = "WARNING" if warning else case.outcome.value.upper()
    style = "yellow" if warning else _STYLE[case.outcome.value]
    strict_note = " [red](--strict: fails the run)[/red]" if case.warned and strict else ""
    console.print(
        f"[{style}]{tag}[/{style}] {escape(case.id)} [dim]({case.category}, "
        f"{case.level})[/dim]: {escape(case.reason)}{strict_note}"
    )
    if case.fails_only_by_invariant(strict):
        console.print(f"    [red]{escape(INVARIANT_NOTE)}[/red]")
    for line in case.diff.splitlines():
        console.print(f"    {escape(line)}")
    if case.stderr_tail.strip():
        console.print("    [dim]SDK stderr (tail):[/dim]")
        for line in case.stderr_tail.rstrip().splitlines()[-_STDERR_LINES:]:
            console.print(f"    [dim]| {escape(line)}[/dim]")


def print_listing(fixtures: Sequence) -> None:
    """`--list`: one fixture per line, tab separated: id, category, level, capabilities."""
    for fixture in fixtures:
        caps = ",".join(fixture.capabilities) or "-"
        print(f"{fixture.id}\t{fixture.category}\t{fixture.level}\t{caps}")
