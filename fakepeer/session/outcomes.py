"""Outcomes (docs/fixtures.md "Outcomes"), known failures, and what makes a run fail.

A required case that fails or errors fails the run unless it is a known failure; a recommended
one only warns unless `--strict`. An unexpected pass (xpass) fails the run under `--strict`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"
    XFAIL = "xfail"
    XPASS = "xpass"


OUTCOME_ORDER = tuple(Outcome)
FAILING = frozenset({Outcome.FAIL, Outcome.ERROR})

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2
#: The bench itself failed on some case (a bug in the bench, never the SDK's fault): the run is
#: not a verdict, so it is neither green nor an ordinary failure.
EXIT_INTERNAL = 3
#: Ctrl-C, SIGTERM, SIGHUP or SIGQUIT ended the run early (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def apply_known_failure(raw: Outcome, known: bool) -> Outcome:
    """A listed case that fails is `xfail`; one that passes is `xpass`; skips stay skips."""
    if not known:
        return raw
    if raw in FAILING:
        return Outcome.XFAIL
    if raw is Outcome.PASS:
        return Outcome.XPASS
    return raw


def fails_run(outcome: Outcome, level: str, strict: bool) -> bool:
    """Whether one case's final outcome makes the exit status 1."""
    if outcome in FAILING:
        return level == "required" or strict
    return outcome is Outcome.XPASS and strict


def is_warning(outcome: Outcome, level: str, strict: bool) -> bool:
    """A recommended-level failure that does not fail the run is a warning."""
    return outcome in FAILING and not fails_run(outcome, level, strict)


def counts(outcomes: Iterable[Outcome | str]) -> dict[str, int]:
    """Count per outcome, every outcome present (zeros included), in a stable order."""
    tally = Counter(Outcome(outcome) for outcome in outcomes)
    return {outcome.value: tally.get(outcome, 0) for outcome in OUTCOME_ORDER}


def summary_line(tally: dict[str, int]) -> str:
    """`N passed, N failed` (+ `, N skipped`): passed counts pass and xpass, failed fail and error.

    Known failures (xfail) are in neither number: they are expected.
    """
    passed = tally.get("pass", 0) + tally.get("xpass", 0)
    failed = tally.get("fail", 0) + tally.get("error", 0)
    line = f"{passed} passed, {failed} failed"
    if tally.get("skip", 0):
        line += f", {tally['skip']} skipped"
    return line


def read_known_failures(path: Path) -> frozenset[str]:
    """One fixture id per line; `#` starts a comment; blank lines are ignored."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            ids.add(entry)
    return frozenset(ids)


def format_known_failures(ids: Iterable[str], header: str = "") -> str:
    """The `--known-failures` file format, sorted, with an optional `#` header."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines.extend(sorted(set(ids)))
    return "\n".join(lines) + "\n"
