"""Whose fault a stray frame is: a late copy of an earlier case's answer is that case's error.

Why: a host that answers twice (say, case A's `completed` again 50 ms later) is caught by
whichever exchange reads the copy, usually a later, innocent case B. The id tells the truth:
when it belongs to exactly one earlier case of the same process, that case is marked `error`
(its record is updated in place: results are shared records) and B is played again on a fresh
process. An id that names no earlier case, several, or the current case stays the current case's
error.
"""

from __future__ import annotations

from typing import NamedTuple

from fakepeer.cases.exchanges import NO_USABLE_ID
from fakepeer.cases.model import Fixture
from fakepeer.session.outcomes import Outcome, apply_known_failure
from fakepeer.session.results import CaseResult
from fakepeer.session.sdk import StrayAnswer
from fakepeer.session.wire import WireLog


class ServedCase(NamedTuple):
    """A case the current process finished (pass or fail), kept until the process ends."""

    fixture: Fixture
    result: CaseResult
    wire: WireLog  # its records are `result.wire`: appending here updates the result
    known_failure: bool


def owner(served: list[ServedCase], ident: object, current: Fixture) -> ServedCase | None:
    """The single earlier case whose exchanges use `ident`, else None (the current case's fault)."""
    if not isinstance(ident, str) or ident == NO_USABLE_ID or ident in exchange_ids(current):
        return None
    owners = [case for case in served if ident in exchange_ids(case.fixture)]
    return owners[0] if len(owners) == 1 else None


def exchange_ids(fixture: Fixture) -> set[str]:
    """The ids a fixture's exchanges use (computed on the error path only)."""
    return {step.exchange_id for step in fixture.steps}


def blame(case: ServedCase, stray: StrayAnswer, during: str, stderr: str) -> None:
    """Turn an earlier case's record into an `error` for the stray copy of its answer.

    The copy joins its wire log; an earlier failure's reason and diff are kept after the new one.
    """
    case.wire.received(stray.payload)
    result = case.result
    reason = (
        f"answered twice: a second answer with id {stray.ident!r} (kind {stray.kind!r}) "
        f"arrived during case {during!r}"
    )
    result.reason = f"{reason}; before that: {result.reason}" if result.reason else reason
    result.raw_outcome = Outcome.ERROR
    result.outcome = apply_known_failure(Outcome.ERROR, case.known_failure)
    if not result.stderr_tail:
        result.stderr_tail = stderr
