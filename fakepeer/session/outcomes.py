"""Outcomes (docs/fixtures.md "Outcomes") and what makes a run fail.

A required case that fails or errors fails the run unless it is a known failure; a recommended
one only warns unless `--strict`, and so does a case whose differences all lie in recommended
parts of its expectation (it passes, with warnings), except that a broken effect invariant
(session/effects.py: what RFD 2 itself demands of every pass, such as "a target runs at most
once") fails the run whatever the case's level: the level says how sure the fixture's own
expectation is, never the invariant. A known failure that passes (xpass) fails the run unless
`--lenient`, so a list of known failures only ever shrinks (as protobuf's conformance runner).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"
    XFAIL = "xfail"
    XPASS = "xpass"


OUTCOME_ORDER = tuple(Outcome)
FAILING = frozenset({Outcome.FAIL, Outcome.ERROR})
#: The outcomes whose cases every report details (reason, diff): failures and xpass.
DETAILED = FAILING | {Outcome.XPASS}

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2
#: The bench itself failed on some case (a bug in the bench, never the SDK's fault): the run is
#: not a verdict, so it is neither green nor an ordinary failure.
EXIT_INTERNAL = 3
#: Ctrl-C, SIGTERM, SIGHUP or SIGQUIT ended the run early (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def apply_known_failure(raw: Outcome, known: bool, failing_pass: bool = False) -> Outcome:
    """A listed case that fails is `xfail`; one that passes is `xpass`; skips stay skips.
    `failing_pass`: the pass fails the run all the same (its recommended parts differ, under
    `--strict`), so a list may hold it: `xfail` too."""
    if not known:
        return raw
    if raw in FAILING or (raw is Outcome.PASS and failing_pass):
        return Outcome.XFAIL
    if raw is Outcome.PASS:
        return Outcome.XPASS
    return raw


def fails_run(
    outcome: Outcome,
    level: str,
    strict: bool,
    lenient: bool = False,
    invariant: bool = False,
    warned: bool = False,
) -> bool:
    """Whether one case's final outcome makes the exit status 1 (`invariant`: the case broke an
    RFD 2 effect invariant, which fails the run at any level; `warned`: a pass that differs in
    recommended parts, which fails the run only with `--strict`)."""
    if outcome in FAILING:
        return level == "required" or strict or invariant
    if outcome is Outcome.PASS:
        return warned and strict
    return outcome is Outcome.XPASS and not lenient


def is_warning(
    outcome: Outcome, level: str, strict: bool, invariant: bool = False, warned: bool = False
) -> bool:
    """A warning, which does not fail the run: a pass that differs in recommended parts only
    (`warned`), or a recommended-level failure (an error), both unless `--strict`."""
    if outcome is Outcome.PASS:
        return warned and not strict
    return outcome in FAILING and not fails_run(outcome, level, strict, invariant=invariant)


def fails_only_by_invariant(
    outcome: Outcome, level: str, strict: bool, invariant: bool = False
) -> bool:
    """A failing case that fails the run only because it broke an invariant (its level alone,
    recommended, would have made it a warning): reports say so."""
    return invariant and outcome in FAILING and not fails_run(outcome, level, strict)


#: What every report says of a recommended case that fails the run through a broken invariant.
INVARIANT_NOTE = (
    "an RFD 2 invariant is broken ([invariant] findings): that fails the run whatever the "
    "level; the recommended expectation's own differences are a warning"
)


def counts(outcomes: Iterable[Outcome | str]) -> dict[str, int]:
    """Count per outcome, every outcome present (zeros included), in a stable order."""
    tally = Counter(Outcome(outcome) for outcome in outcomes)
    return {outcome.value: tally.get(outcome, 0) for outcome in OUTCOME_ORDER}


def summary_line(tally: dict[str, int], list_problems: int = 0) -> str:
    """`N passed, N failed`, then `, N errors`, `, N skipped`, `, N xfailed`, `, N xpassed`,
    `, N warnings` and `, N known-failure list errors` when there are any (as pytest's closing
    line).

    Every outcome is in exactly one number, so a known failure that passes (xpass) or a list
    naming no fixture can never hide inside `passed`: CI logs show why a green-looking count
    exited 1. Warnings (`tally["warnings"]`) are no outcome but cases counted again, as pytest
    counts them: passes that differ in recommended parts, and recommended-level errors.
    """
    line = f"{tally.get('pass', 0)} passed, {tally.get('fail', 0)} failed"
    if tally.get("error", 0):
        line += f", {tally['error']} error" + ("s" if tally["error"] != 1 else "")
    for outcome, word in (("skip", "skipped"), ("xfail", "xfailed"), ("xpass", "xpassed")):
        if tally.get(outcome, 0):
            line += f", {tally[outcome]} {word}"
    if tally.get("warnings", 0):
        line += f", {tally['warnings']} warning" + ("s" if tally["warnings"] != 1 else "")
    if list_problems:
        line += f", {list_problems} known-failure list error" + ("s" if list_problems != 1 else "")
    return line
