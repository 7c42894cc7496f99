"""Running a selection of fixtures against one or more SDKs: jobs, time bounds, Ctrl-C.

Each job owns one SdkSession (one SDK process at a time) and takes cases in fixture-id order
from a shared queue; one job runs in the calling thread, several run in threads. Whatever
happens, every SDK process is shut down or killed before `run_suite` returns or raises.
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import interrupts
from fakepeer.cases.model import Fixture
from fakepeer.compare import Comparer
from fakepeer.protocol import fastpath
from fakepeer.session.attribution import blame, owner
from fakepeer.session.case import LifecyclePlayer, run_case
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun, trim_result
from fakepeer.session.sdk import SdkSession, late_window
from fakepeer.session.targets import SdkTarget
from fakepeer.suite.order import play_order

DEFAULT_CASE_TIMEOUT = 5.0
#: Cases per process whose wire logs stay in memory for matching a late copy of an answer.
RECENT_CASES = 32
#: How long an interrupted run waits for its job threads once their processes are killed.
STOP_JOIN_SECONDS = 2.0
INTERRUPTED_DURING = "not run: the run was interrupted during the case"

ProgressCallback = Callable[[SdkTarget, CaseResult], None]


@dataclass
class RunOptions:
    timeout: float = DEFAULT_CASE_TIMEOUT
    max_time: float | None = None
    jobs: int = 1
    strict: bool = False
    validator: Callable | None = None
    #: `--maxfail N`: after N cases that fail the run, the rest are not run.
    max_failures: int | None = None
    #: (SDK label, fixture id) of a listed known failure: it does not count toward --maxfail.
    tolerated: Callable[[str, str], bool] | None = None
    #: Play the cases in this seeded random order (`--shuffle`; reports keep fixture-id order).
    shuffle_seed: int | None = None
    #: Play every case on a fresh host process (`--isolate`).
    isolate: bool = False
    #: Seconds a host may take from its start to the end of registration (`--start-timeout`;
    #: None: `session.case.STARTUP_SECONDS`, at least the case timeout).
    start_timeout: float | None = None
    #: `time.monotonic()` when the command began (`run`): --max-time counts from there, so
    #: loading the fixtures counts too. None: from the start of `run_suite`.
    began: float | None = None
    #: Plays lifecycle fixtures (`fakepeer.server.lifecycle.play_lifecycle`, handed down by the
    #: command above: the suite never imports the server). None: a lifecycle case is an
    #: internal error, never a pass.
    lifecycle_player: LifecyclePlayer | None = None


@dataclass
class _Budget:
    """The run's count of cases that fail it, against --maxfail (shared by every SDK)."""

    limit: int | None
    failed: int = 0

    def spent(self) -> bool:
        return self.limit is not None and self.failed >= self.limit


@dataclass
class _Shared:
    """What the job threads of one SDK share: the run's settings, and the state they fill."""

    target: SdkTarget
    options: RunOptions
    comparer: Comparer
    overall: float | None  # the --max-time deadline
    on_result: ProgressCallback | None
    cases: deque[Fixture]  # popleft is atomic: the jobs need no lock to take the next case
    budget: _Budget = field(default_factory=lambda: _Budget(None))
    results: dict[str, CaseResult] = field(default_factory=dict)
    sessions: list[SdkSession] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    #: Why a worker thread died outside any case (its remaining cases go to the others).
    failure: str = ""


def run_suite(
    targets: Sequence[SdkTarget],
    fixtures: Sequence[Fixture],
    options: RunOptions,
    on_result: ProgressCallback | None = None,
) -> RunResult:
    """Run every fixture against every target; results per SDK, each in fixture-id order.

    Accounting: every fixture gets exactly one result per target, whatever happens. A bench
    failure on a case is that case's internal error; Ctrl-C (KeyboardInterrupt) ends the run
    early, stops every SDK process, and marks the cases it did not finish as not run.
    """
    started = time.monotonic()
    began = started if options.began is None else min(options.began, started)
    overall = began + options.max_time if options.max_time else None
    ordered = sorted(fixtures, key=lambda fixture: fixture.id)
    runs: list[SdkRun] = []
    interrupted = False
    budget = _Budget(options.max_failures)
    with _old_objects_frozen():
        for target in targets:
            if interrupted:
                runs.append(_account(target, ordered, {}, options, interrupted=True))
                continue
            run, interrupted = _run_target(target, ordered, options, overall, on_result, budget)
            runs.append(run)
    return RunResult(
        sdks=runs,
        strict=options.strict,
        interrupted=interrupted,
        shuffle_seed=options.shuffle_seed,
        isolate=options.isolate,
    )


@contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """Keep what exists before the run (the loaded fixtures above all) out of full GC scans.

    Each case leaves its result behind, so the collector's full passes come back during a long
    run and would walk every fixture again each time (a quarter of the per-case cost at 10,000
    cases). A caller that froze objects itself is left alone.
    """
    if not fastpath.enabled() or not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run_target(
    target: SdkTarget,
    fixtures: list[Fixture],
    options: RunOptions,
    overall: float | None,
    on_result: ProgressCallback | None,
    budget: _Budget | None = None,
) -> tuple[SdkRun, bool]:
    """One SDK's run, and whether it was interrupted."""
    started = time.monotonic()
    queue = deque(play_order(fixtures, options.shuffle_seed))
    shared = _Shared(target, options, Comparer(options.validator), overall, on_result, queue)
    if budget is not None:
        shared.budget = budget
    jobs = max(1, min(options.jobs, len(fixtures) or 1))
    interrupted = False
    workers: list[threading.Thread] = []
    try:
        if jobs == 1:  # no thread hand-offs on the hot path: the calling thread runs the cases
            _work(shared)
        else:
            workers = _start_jobs(jobs, shared)
            _join(workers)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        shared.stop.set()
        with shared.lock:
            sessions = list(shared.sessions)
        for session in sessions:
            session.discard()
        _join(workers, STOP_JOIN_SECONDS)
    with shared.lock:
        results = dict(shared.results)
    run = _account(target, fixtures, results, options, interrupted, shared.failure)
    run.duration = time.monotonic() - started
    capable = [s for s in sessions if s.capabilities is not None]
    if capable:
        run.capabilities = sorted(capable[0].capabilities or ())
        run.handshake_problems = capable[0].handshake_problems
    run.starts = sum(s.starts for s in sessions)
    return run, interrupted


def _account(
    target: SdkTarget,
    fixtures: list[Fixture],
    results: dict[str, CaseResult],
    options: RunOptions,
    interrupted: bool,
    failure: str = "",
) -> SdkRun:
    """One result per fixture: a case without one is not run (interrupted) or an internal error."""
    run = SdkRun(label=target.label, command=list(target.command))
    for fixture in fixtures:
        result = results.get(fixture.id)
        if result is None:
            if interrupted:
                result = _not_run(fixture, "not run: the run was interrupted")
                result.not_run = True
            else:
                lost = "the bench recorded no result for this case"
                result = _internal(fixture, f"{lost} ({failure or 'no cause known'})")
        run.results.append(result)
    return run


def _start_jobs(jobs: int, shared: _Shared) -> list[threading.Thread]:
    workers = [
        threading.Thread(
            target=_work,
            args=(shared,),
            name=f"conform-{shared.target.label}-{n}",
            daemon=True,
        )
        for n in range(jobs)
    ]
    for worker in workers:
        worker.start()
    return workers


def _join(workers: list[threading.Thread], seconds: float | None = None) -> None:
    """Wait for the workers (at most `seconds` in all); short joins keep Ctrl-C responsive."""
    until = None if seconds is None else time.monotonic() + seconds
    for worker in workers:
        while worker.is_alive() and (until is None or time.monotonic() < until):
            worker.join(0.2)


def _work(shared: _Shared) -> None:
    session = SdkSession(shared.target.factory, shared.options.validator)
    with shared.lock:
        shared.sessions.append(session)
    recent: deque[CaseResult] = deque()
    try:
        _serve(session, shared, recent)
        check_late_frame(session)
    except Exception as exc:  # noqa: BLE001 - a bench bug outside any case: the cases it
        if not shared.stop.is_set():  # leaves are accounted for as internal errors
            shared.failure = f"a worker failed: {_where(exc)}"
    finally:
        for result in recent:
            _forget_wire(result)
        session.shutdown(shared.overall)


def _serve(session: SdkSession, shared: _Shared, recent: deque[CaseResult]) -> None:
    options, overall, on_result = shared.options, shared.overall, shared.on_result
    while not shared.stop.is_set():
        interrupts.pending()  # a signal whose KeyboardInterrupt something swallowed
        try:
            fixture = shared.cases.popleft()
        except IndexError:
            break
        if overall is not None and time.monotonic() >= overall:
            result = _not_run(fixture, f"not run: --max-time of {options.max_time:g} s exceeded")
            result.not_run = True
        elif shared.budget.spent():
            result = _not_run(fixture, f"not run: --maxfail {options.max_failures} reached")
            result.not_run = True
        else:
            try:
                result = run_case(
                    session,
                    fixture,
                    timeout=options.timeout,
                    comparer=shared.comparer,
                    overall_deadline=overall,
                    fresh=options.isolate,
                    startup=options.start_timeout,
                    lifecycle_player=options.lifecycle_player,
                )
            except Exception as exc:  # noqa: BLE001 - a bench bug: this case's internal error
                result = _internal(fixture, f"the bench failed on this case: {_where(exc)}")
                session.discard()  # the conversation's state is unknown: start afresh
            if shared.stop.is_set():  # interrupted meanwhile: whatever it says, it did not finish
                result = _not_run(fixture, "not run: the run was interrupted during the case")
                result.not_run = True
        trim_result(result)
        _remember(recent, result, session)
        with shared.lock:
            if not result.not_run and _counts_as_failure(result, shared):
                shared.budget.failed += 1
            shared.results[fixture.id] = result
            if on_result is not None:
                on_result(shared.target, result)


def _counts_as_failure(result: CaseResult, shared: _Shared) -> bool:
    if shared.budget.limit is None or not result.fails_run(shared.options.strict):
        return False
    tolerated = shared.options.tolerated
    return tolerated is None or not tolerated(shared.target.label, result.id)


def _remember(recent: deque[CaseResult], result: CaseResult, session: SdkSession) -> None:
    """Keep the wire logs of the last few cases of this process (a late copy of an answer is
    matched against them); older passing cases let go of theirs (bounded memory)."""
    recent.append(result)
    served = session.served
    if len(served) > RECENT_CASES:
        del served[: len(served) - RECENT_CASES]
    while len(recent) > RECENT_CASES:
        _forget_wire(recent.popleft())
    if len(recent) <= len(served) and served[-len(recent)] is recent[0]:
        return  # the usual case: this process served every recent case, in the same order
    kept = {id(case) for case in served}  # a restart began a new process: drop older ones
    while recent and id(recent[0]) not in kept:
        _forget_wire(recent.popleft())


def _forget_wire(result: CaseResult) -> None:
    if result.raw_outcome in (Outcome.PASS, Outcome.SKIP) and not result.findings:
        result.wire = []  # a pass with warnings keeps its log, as a failure does


def check_late_frame(session: SdkSession) -> None:
    """A frame after the session's last case is a second answer: blame the case it answers."""
    stray = session.late_frame(late_window(session, at_end=True), closing=True)
    if stray is None or not session.served:
        return
    earlier = owner(session, stray.ident, ()) or session.served[-1]
    blame(earlier, stray, "after the session's last case", session.stderr_tail())


def _where(exc: BaseException) -> str:
    """`RecursionError: ... (compare.py:120 in _walk)`: enough to report the bench bug."""
    frames = traceback.extract_tb(exc.__traceback__)
    place = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})"
    return f"{type(exc).__name__}: {str(exc)[:300]}{place if frames else ''}"


def _internal(fixture: Fixture, reason: str) -> CaseResult:
    """An internal error: an `error` row, marked so the run exits 3 (known failure or not)."""
    result = _not_run(fixture, f"internal error: {reason}")
    result.internal = True
    return result


def _not_run(fixture: Fixture, reason: str) -> CaseResult:
    return CaseResult(
        id=fixture.id,
        category=fixture.category,
        level=fixture.level,
        outcome=Outcome.ERROR,
        raw_outcome=Outcome.ERROR,
        reason=reason,
    )
