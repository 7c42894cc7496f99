"""Whose fault a stray frame is: a late copy of an earlier case's answer is that case's error.

Why: a host that answers twice (say, case A's `completed` again 50 ms later) is caught by
whichever exchange reads the copy, usually a later, innocent case B. The id tells the truth:
when exactly one earlier case of the same process sent a frame with that id, that case is marked
`error` (its record is updated in place: results are shared records) and B is played again on a
fresh process. An id that names no earlier case, several, or the current case stays the current
case's error.

The earlier cases are their results alone (no extra object per case: a long run keeps them all,
and every object kept makes the collector's full passes slower); their ids are read back from
the frames their wire logs hold, on this error path only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from fakepeer.cases.exchanges import NO_USABLE_ID
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult
from fakepeer.session.sdk import StrayAnswer
from fakepeer.session.wire import WireRecord


def owner(served: list[CaseResult], ident: object, current: list[WireRecord]) -> CaseResult | None:
    """The single earlier case that sent a frame with id `ident`; None when the current case
    did (its wire log is `current`), when none or several did, or for the id of no exchange."""
    if not isinstance(ident, str) or ident == NO_USABLE_ID or ident in sent_ids(current):
        return None
    owners = [result for result in served if ident in sent_ids(result.wire)]
    return owners[0] if len(owners) == 1 else None


def sent_ids(records: Iterable[WireRecord]) -> set[str]:
    """The ids of the frames a wire log shows sent (frames that are not JSON objects have none)."""
    ids = set()
    for record in records:
        if record.direction != "sent":
            continue
        try:
            envelope = json.loads(record.payload)
        except (ValueError, RecursionError):
            continue
        if isinstance(envelope, dict) and isinstance(envelope.get("id"), str):
            ids.add(envelope["id"])
    return ids


def blame(result: CaseResult, stray: StrayAnswer, during: str, stderr: str) -> None:
    """Turn an earlier case's record into an `error` for the stray copy of its answer.

    `during` says when it came: `during case 'x.y'`, or `after the session's last case`.

    The copy joins its wire log; an earlier failure's reason and diff are kept after the new one.
    (Known failures are applied after the run, so only the raw outcome exists yet.)
    """
    at = time.monotonic() - result.started
    result.wire.append(WireRecord.capture("received", at, stray.payload))
    reason = (
        f"answered twice: a second answer with id {stray.ident!r} (kind {stray.kind!r}) "
        f"arrived {during}"
    )
    result.reason = f"{reason}; before that: {result.reason}" if result.reason else reason
    result.raw_outcome = result.outcome = Outcome.ERROR
    if not result.stderr_tail:
        result.stderr_tail = stderr
