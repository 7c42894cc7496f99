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
from fakepeer.session.sdk import SdkSession, StrayAnswer
from fakepeer.session.wire import WireRecord


def owner(session: SdkSession, ident: object, current: Iterable[str]) -> CaseResult | None:
    """The single earlier case of the session's process that sent a frame with id `ident`;
    None when the current case did (its ids are `current`), when none or several did, or for
    the id of no exchange. Exchange ids are unique per case, variant and scenario run, so
    the index of every id the process was sent finds the owner however far back it is."""
    if not isinstance(ident, str) or ident == NO_USABLE_ID or ident in current:
        return None
    found = session.owners.get(ident)
    if found is not None or ident in session.owners:
        return found
    # a result recorded without its ids (a caller of its own): read them from the wire logs
    owners = [r for r in session.served if not r.exchange_ids and ident in sent_ids(r.wire)]
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
