"""One SDK session: handshake, reset, per-case scripts, outcomes, results (the suite runner that
drives many sessions is `fakepeer.suite`)."""

from fakepeer.session.case import run_case
from fakepeer.session.outcomes import (
    EXIT_FAILURES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Outcome,
    counts,
    summary_line,
)
from fakepeer.session.results import CaseResult, RunResult, SdkRun
from fakepeer.session.sdk import SdkSession, SdkUnavailable, SessionError
from fakepeer.session.targets import (
    EarlyStart,
    SdkTarget,
    command_target,
    default_target,
    targets_from_options,
)
from fakepeer.session.wire import WireLog, WireRecord

__all__ = [
    "EXIT_FAILURES",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CaseResult",
    "Outcome",
    "RunResult",
    "SdkRun",
    "SdkSession",
    "SdkTarget",
    "SdkUnavailable",
    "SessionError",
    "WireLog",
    "WireRecord",
    "command_target",
    "counts",
    "default_target",
    "run_case",
    "summary_line",
    "targets_from_options",
    "EarlyStart",
]
