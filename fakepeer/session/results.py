"""Results of a run, kept per SDK so several SDKs can be compared side by side."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from fakepeer.compare import MISSING, Finding, diff_text
from fakepeer.session.outcomes import (
    EXIT_FAILURES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    Outcome,
    counts,
    fails_only_by_invariant,
    fails_run,
    is_warning,
    summary_line,
)
from fakepeer.session.wire import WireRecord

#: A diff value whose JSON text is longer is kept as a one-line summary (as wire logs keep only
#: the head of a large payload): a host answering 16 MiB frames must not cost 16 MiB per case.
REPORTED_VALUE_CHARS = 64 * 1024
REPORTED_HEAD_CHARS = 1024
#: Longest reason or finding message kept.
REPORTED_MESSAGE_CHARS = 4096
#: Findings kept per case (the first ones, plus the first of every kind beyond them, so what a
#: verdict reads from the kinds is unchanged); the rest are counted (`findings_dropped`). A
#: host answering a 150,000-event trace must not cost a finding per event in every report.
KEPT_FINDINGS = 100


@dataclass
class CaseResult:
    """One fixture run against one SDK."""

    id: str
    category: str
    level: str
    outcome: Outcome
    raw_outcome: Outcome
    duration: float = 0.0
    #: Seconds the case took once its host was up (not reported): the pace `late_window` scales
    #: with, so a host's start-up does not stretch the wait for a late copy.
    pace: float = 0.0
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    stderr_tail: str = ""
    wire: list[WireRecord] = field(default_factory=list)
    #: `time.monotonic()` when the case began (not reported): a frame that arrives later still
    #: joins its wire log with the right time, e.g. the late copy of an answer (`attribution`).
    started: float = 0.0
    #: The bench itself failed on this case (an `error` that is no verdict on the SDK).
    internal: bool = False
    #: The run was interrupted before this case could run (an `error`, never a pass).
    not_run: bool = False
    #: The piece of the host contract the host lacks that this case needed (`conform.trace`,
    #: a control message kind), None when nothing was missing; reports group such cases.
    missing: str | None = None
    #: The exchange ids the bench sent in this case (not reported): a stray frame carrying one
    #: is this case's (`attribution`).
    exchange_ids: tuple[str, ...] = ()
    #: Findings found but not kept (beyond KEPT_FINDINGS); every report states the count.
    findings_dropped: int = 0

    @property
    def diff(self) -> str:
        text = diff_text(self.findings)
        if self.findings_dropped:
            text += f"\n{dropped_line(self.findings_dropped)}"
        return text

    @property
    def invariant_broken(self) -> bool:
        """Whether the case broke an effect invariant (a finding of kind `invariant`)."""
        return any(finding.kind == "invariant" for finding in self.findings)

    @property
    def warnings(self) -> list[Finding]:
        """The differences in recommended parts (docs/fixtures.md "Levels inside a fixture")."""
        return [finding for finding in self.findings if finding.recommended]

    @property
    def warned(self) -> bool:
        """A pass whose only differences lie in recommended parts: a warning."""
        return self.outcome is Outcome.PASS and any(f.recommended for f in self.findings)

    @property
    def counts_as_warning(self) -> bool:
        """What the closing line counts as a warning, with or without --strict: a pass with
        recommended differences, or a recommended-level failure that broke no invariant."""
        return self.warned or is_warning(self.outcome, self.level, False, self.invariant_broken)

    def fails_run(self, strict: bool, lenient: bool = False) -> bool:
        """A case not run keeps any run from passing, whatever its level: it has no verdict."""
        return self.not_run or fails_run(
            self.outcome, self.level, strict, lenient, self.invariant_broken, self.warned
        )

    def is_warning(self, strict: bool) -> bool:
        return is_warning(self.outcome, self.level, strict, self.invariant_broken, self.warned)

    def fails_only_by_invariant(self, strict: bool) -> bool:
        """Recommended, failing the run only through a broken invariant (reports say which)."""
        return fails_only_by_invariant(self.outcome, self.level, strict, self.invariant_broken)


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

    def warning_count(self) -> int:
        return sum(1 for result in self.results if result.counts_as_warning)


@dataclass
class RunResult:
    """A whole run: one SdkRun per `--sdk`."""

    sdks: list[SdkRun]
    strict: bool = False
    #: a known failure that passes (xpass) does not fail the run (`--lenient`)
    lenient: bool = False
    #: Ctrl-C or a signal ended the run early: unfinished cases are marked not run.
    interrupted: bool = False
    #: The seed of the order the cases ran in (`--shuffle`), None for fixture-id order.
    shuffle_seed: int | None = None
    #: Every case ran on a fresh host process (`--isolate`).
    isolate: bool = False
    #: Problems of the --known-failures lists (an id that is no fixture, ...): each fails the
    #: run unless lenient, and every report names them.
    list_problems: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return counts(result.outcome for sdk in self.sdks for result in sdk.results)

    def summary(self) -> str:
        """The closing line (`summary_line`) of this run."""
        tally = {**self.counts(), "warnings": self.warning_count()}
        return summary_line(tally, len(self.list_problems))

    def warning_count(self) -> int:
        """Cases counted as warnings, over every SDK (`CaseResult.counts_as_warning`)."""
        return sum(sdk.warning_count() for sdk in self.sdks)

    def exit_status(self) -> int:
        """0 only when every required case passes or is a known failure (and no xpass unless
        lenient).

        An interrupted run is 130 and a run where the bench failed internally 3, whatever the
        cases say: neither is a verdict.
        """
        if self.interrupted:
            return EXIT_INTERRUPTED
        if any(r.internal for sdk in self.sdks for r in sdk.results):
            return EXIT_INTERNAL
        failing = any(
            r.fails_run(self.strict, self.lenient) for sdk in self.sdks for r in sdk.results
        ) or bool(self.list_problems and not self.lenient)
        return EXIT_FAILURES if failing else EXIT_OK


def dropped_line(count: int) -> str:
    """The line every report shows for the findings a case did not keep."""
    return f"... and {count:,} more finding(s), not kept (at most {KEPT_FINDINGS} per case)"


def trim_result(result: CaseResult) -> None:
    """Bound what one result holds: long reasons and messages clipped, big diff values summed up,
    at most KEPT_FINDINGS findings (plus the first of each kind), the rest counted."""
    result.reason = _clip(result.reason)
    kept, dropped = cap_findings(result.findings)
    result.findings = [_trim_finding(finding) for finding in kept]
    result.findings_dropped += dropped


def cap_findings(findings: list[Finding], keep: int = KEPT_FINDINGS) -> tuple[list[Finding], int]:
    """The first `keep` findings, and the first of every kind not among them (a verdict reads
    the kinds: an `invariant` finding fails the run whatever the level); and how many went."""
    if len(findings) <= keep:
        return findings, 0
    capped = CappedFindings(keep)
    capped.extend(findings)
    return list(capped), capped.dropped


class CappedFindings(list):
    """A list of findings that keeps what `cap_findings` keeps as they come, and counts the
    rest: a check over 150,000 trace events builds at most `keep` findings plus one per kind."""

    def __init__(self, keep: int = KEPT_FINDINGS) -> None:
        super().__init__()
        self.keep = keep
        self.dropped = 0
        self._kinds: set[tuple[str, str]] = set()

    def append(self, finding: Finding) -> None:
        # the first of every kind at every level is kept: a verdict reads both (a required
        # difference dropped behind recommended ones would turn a failure into a warning)
        key = (finding.kind, finding.level)
        if len(self) < self.keep or key not in self._kinds:
            self._kinds.add(key)
            super().append(finding)
        else:
            self.dropped += 1

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.append(finding)
        if isinstance(findings, CappedFindings):
            self.dropped += findings.dropped


def _trim_finding(finding: Finding) -> Finding:
    expected, actual = _summary(finding.expected), _summary(finding.actual)
    message = _clip(finding.message)
    if expected is finding.expected and actual is finding.actual and message is finding.message:
        return finding
    return dataclasses.replace(finding, message=message, expected=expected, actual=actual)


def _summary(value: object) -> object:
    if value is MISSING or value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str) and len(value) <= REPORTED_VALUE_CHARS:
        return value
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= REPORTED_VALUE_CHARS:
        return value
    data = text.encode("utf-8", "surrogatepass")
    head = text[:REPORTED_HEAD_CHARS]
    return (
        f"[truncated: {len(data)} bytes of JSON text, sha256 "
        f"{hashlib.sha256(data).hexdigest()}; it begins {head}]"
    )


def _clip(text: str) -> str:
    if len(text) <= REPORTED_MESSAGE_CHARS:
        return text
    return (
        f"{text[:REPORTED_MESSAGE_CHARS]}... [{len(text) - REPORTED_MESSAGE_CHARS} more characters]"
    )
