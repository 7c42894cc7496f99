"""`fuzz --semantics`: hypothesis-generated programs, histories, modes and targets, each played
against one SDK and held to the oracle (fakepeer/oracle) on its answer and its effect trace.

A disagreement is shrunk by hypothesis to a minimal case and written as a draft fixture.
`seed` and `examples` make a campaign reproducible; `max_time` bounds it (the campaign stops
there, and the result says how many examples were played).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as seed_decorator
from hypothesis.errors import Flaky

from fakepeer.fuzz.programs import SemanticCase, semantic_cases
from fakepeer.fuzz.semantic_check import disagreement, expectation_of
from fakepeer.fuzz.semantic_fixture import draft_document, write_draft
from fakepeer.fuzz.semantic_session import SemanticSession
from fakepeer.oracle import Unmodeled
from fakepeer.session.sdk import SessionError
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError


class SemanticSetupError(Exception):
    """The SDK could not be started and registered, so nothing was fuzzed."""


@dataclass
class SemanticFailure:
    """The shrunk counterexample and its draft fixture."""

    case: SemanticCase
    problem: str
    draft: dict
    found_after: int  # examples played up to and including the first failing one
    path: Path | None = None
    #: Why it could not be written under --out (it is printed all the same).
    write_error: str = ""


@dataclass
class SemanticResult:
    """Counts of one campaign against one SDK."""

    sdk: str
    seed: int
    examples: int
    played: int = 0  # examples played before the first failure (or all, when none)
    invocations: int = 0  # every case sent, shrinking included
    unmodelled: int = 0  # drawn cases the oracle does not decide (not played)
    seconds: float = 0.0
    timed_out: bool = False
    failure: SemanticFailure | None = None

    @property
    def rate(self) -> float:
        """Cases played per second (shrinking included)."""
        return self.invocations / self.seconds if self.seconds > 0 else 0.0


class _Disagreement(AssertionError):
    pass


class _TimeUp(BaseException):  # noqa: N818 - not an Exception, so hypothesis does not shrink it
    """--max-time has passed: hypothesis lets a BaseException through without shrinking it."""


def run_semantic_campaign(
    target: SdkTarget,
    examples: int = 1000,
    seed: int | None = None,
    out: Path | None = None,
    timeout: float = 5.0,
    max_time: float | None = None,
    shrink: bool = True,
) -> SemanticResult:
    """Fuzz one SDK's invocation semantics against the oracle; stop at the first disagreement."""
    chosen = seed if seed is not None else random.SystemRandom().randrange(2**32)
    result = SemanticResult(sdk=target.label, seed=chosen, examples=examples)
    session = SemanticSession(target, timeout)
    started = time.monotonic()
    deadline = started + max_time if max_time is not None else None
    found: list[tuple[SemanticCase, str]] = []
    try:
        try:
            session.start(deadline)
        except (SessionError, TransportError) as exc:
            reason = getattr(exc, "reason", str(exc))
            if deadline is not None and time.monotonic() >= deadline:
                reason = f"it had not registered when --max-time ({max_time:g} s) was reached"
            tail = session.session.stderr_tail()
            raise SemanticSetupError(
                f"cannot start {target.label}: {reason} {tail[-400:]}"
            ) from None

        def prop(case: SemanticCase) -> None:
            try:
                expectation_of(case)
            except Unmodeled:
                result.unmodelled += 1
                reject()
            if deadline is not None and time.monotonic() >= deadline:
                result.timed_out = True  # shrinking stops too: the smallest case found so far
                raise _TimeUp
            result.invocations += 1
            played = session.play(case, deadline)
            if played.broken and deadline is not None and time.monotonic() >= deadline:
                result.timed_out = True  # cut short by --max-time, not the SDK's doing
                raise _TimeUp
            if not found:
                result.played += 1
            problem = disagreement(case, played)
            if problem is not None:
                found.append((case, problem))
                raise _Disagreement(problem)

        phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)
        check = settings(
            max_examples=examples,
            database=None,
            deadline=None,
            phases=phases,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            print_blob=False,
        )(given(semantic_cases())(prop))
        try:
            seed_decorator(chosen)(check)()
        except (_Disagreement, _TimeUp):
            pass
        except (Flaky, ExceptionGroup):
            # a disagreement that did not happen again on replay: an SDK whose answer depends
            # on what it served before (RFD 2 forbids that); the first sighting is reported
            if not found:
                raise
    finally:
        result.seconds = time.monotonic() - started
        session.close()
    if found:
        case, problem = found[-1]  # hypothesis replays the minimal example last
        draft = draft_document(case, expectation_of(case), problem, target.label)
        failure = SemanticFailure(case, problem, draft, result.played)
        if out is not None:
            try:
                failure.path = write_draft(draft, out)
            except OSError as exc:  # a full disk: the draft is still printed
                failure.write_error = f"cannot write it under {out}: {exc}"
        result.failure = failure
    return result
