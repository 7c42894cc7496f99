"""Results of a run, kept per SDK so several SDKs can be compared side by side."""

from __future__ import annotations

from dataclasses import dataclass, field

from fakepeer.compare import Finding, diff_text
from fakepeer.session.outcomes import Outcome, counts, fails_run, is_warning
from fakepeer.session.wire import WireRecord


@dataclass
class CaseResult:
    """One fixture run against one SDK."""

    id: str
    category: str
    level: str
    outcome: Outcome
    raw_outcome: Outcome
    duration: float = 0.0
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    stderr_tail: str = ""
    wire: list[WireRecord] = field(default_factory=list)
    #: `time.monotonic()` when the case began (not reported): a frame that arrives later still
    #: joins its wire log with the right time, e.g. the late copy of an answer (`attribution`).
    started: float = 0.0

    @property
    def diff(self) -> str:
        return diff_text(self.findings)

    def fails_run(self, strict: bool, lenient: bool = False) -> bool:
        return fails_run(self.outcome, self.level, strict, lenient)

    def is_warning(self, strict: bool) -> bool:
        return is_warning(self.outcome, self.level, strict)


@dataclass
class SdkRun:
    """Every case result for one SDK, in fixture-id order."""

    label: str
    command: list[str]
    capabilities: list[str] | None = None
    handshake_problems: list[str] = field(default_factory=list)
    starts: int = 0
    duration: float = 0.0
    results: list[CaseResult] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return counts(result.outcome for result in self.results)


@dataclass
class RunResult:
    """A whole run: one SdkRun per `--sdk`."""

    sdks: list[SdkRun]
    strict: bool = False
    #: a known failure that passes (xpass) does not fail the run (`--lenient`)
    lenient: bool = False

    def counts(self) -> dict[str, int]:
        return counts(result.outcome for sdk in self.sdks for result in sdk.results)

    def exit_status(self) -> int:
        """0 only when every required case passes or is a known failure (and no xpass unless
        lenient)."""
        failing = any(
            r.fails_run(self.strict, self.lenient) for sdk in self.sdks for r in sdk.results
        )
        return 1 if failing else 0
