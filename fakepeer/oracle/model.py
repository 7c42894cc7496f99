"""What the oracle computes, and the signals its interpreter raises while reading a program.

Why a model of its own: the oracle is an independent reading of docs/protocol.md §9-§11 and
docs/host-contract.md §12.4-§13, so it shares no code with the reference SDKs (runners/) and
only the value, error and duration rules with the bench's protocol model.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class Unmodeled(Exception):
    """The oracle does not decide this case (a reading the text leaves open, or out of scope)."""


@dataclass(frozen=True)
class Expectation:
    """The answer an SDK must give and the effect trace it must show for one `invoke`.

    `open` lists JSON pointers (from the envelope root) whose values the text leaves to the SDK
    (the message of an error the SDK makes); `trace` holds the events up to the moment the
    answer was fixed, oldest first. After that moment a host may still record `caught` events
    (a workflow that goes on after a caught suspension), never a `started` one.
    """

    kind: str
    body: dict
    open: tuple[str, ...] = ()
    trace: tuple[dict, ...] = ()
    #: One line on why this answer, for counterexample reports.
    why: str = ""


@dataclass
class AppError(Exception):
    """An application-level error raised into the workflow: catchable by `catch` and catch_all.

    `record` is the error record as JSON; `sdk_made` is True when the SDK chose its message.
    """

    record: dict
    sdk_made: bool = False


class Stop(Exception):
    """The SDK's suspension signal: the pass has its answer. Only `catch_all` catches it."""


class BadProgram(Exception):
    """A malformed program or op: the function fails with `conform.bad_program` (§13.2)."""


#: Stands for a message the SDK chooses (§5.2); its places become `Expectation.open` pointers.
OPEN_TEXT = "\x00the SDK's own message\x00"


def sdk_error(category: str) -> AppError:
    """An error the SDK raises itself: retryable false, details {}, message of its choosing."""
    record = {"category": category, "message": OPEN_TEXT, "retryable": False, "details": {}}
    return AppError(record, sdk_made=True)


def unhandled(message: str) -> AppError:
    """A plain language error mapped to `app.unhandled` (§11.5, D-APP-UNHANDLED)."""
    record = {"category": "app.unhandled", "message": message, "retryable": True, "details": {}}
    return AppError(record)


@dataclass
class Ambient:
    """The host state `conform.set_ambient` and `conform.set_admission` change (§12.3)."""

    values: dict[str, str] = field(default_factory=dict)
    admission: bool = True
