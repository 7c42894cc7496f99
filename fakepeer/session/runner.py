"""Running a selection of fixtures against one or more SDKs: jobs, time bounds, Ctrl-C.

Each job owns one SdkSession (one SDK process at a time) and takes cases in fixture-id order
from a shared queue; one job runs in the calling thread, several run in threads. Whatever
happens, every SDK process is shut down or killed before `run_suite` returns or raises.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from fakepeer.cases.model import Fixture
from fakepeer.compare import Comparer
from fakepeer.protocol import fastpath
from fakepeer.session.case import run_case
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun
from fakepeer.session.sdk import SdkSession
from fakepeer.session.targets import SdkTarget

DEFAULT_CASE_TIMEOUT = 5.0

ProgressCallback = Callable[[SdkTarget, CaseResult], None]


@dataclass
class RunOptions:
    timeout: float = DEFAULT_CASE_TIMEOUT
    max_time: float | None = None
    jobs: int = 1
    strict: bool = False
    validator: Callable | None = None


@dataclass
class _Shared:
    """State shared by the job threads of one SDK."""

    cases: deque[Fixture]  # popleft is atomic: the jobs need no lock to take the next case
    results: dict[str, CaseResult] = field(default_factory=dict)
    sessions: list[SdkSession] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)


def run_suite(
    targets: Sequence[SdkTarget],
    fixtures: Sequence[Fixture],
    options: RunOptions,
    on_result: ProgressCallback | None = None,
) -> RunResult:
    """Run every fixture against every target; results per SDK, each in fixture-id order."""
    started = time.monotonic()
    overall = started + options.max_time if options.max_time else None
    ordered = sorted(fixtures, key=lambda fixture: fixture.id)
    runs = []
    with _old_objects_frozen():
        for target in targets:
            runs.append(_run_target(target, ordered, options, overall, on_result))
    return RunResult(sdks=runs, strict=options.strict)


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
) -> SdkRun:
    started = time.monotonic()
    shared = _Shared(cases=deque(fixtures))
    jobs = max(1, min(options.jobs, len(fixtures) or 1))
    comparer = Comparer(options.validator)
    try:
        if jobs == 1:  # no thread hand-offs on the hot path: the calling thread runs the cases
            _work(target, shared, options, overall, comparer, on_result)
        else:
            _run_jobs(jobs, target, shared, options, overall, comparer, on_result)
    finally:
        shared.stop.set()
        with shared.lock:
            sessions = list(shared.sessions)
        for session in sessions:
            session.discard()
    run = SdkRun(label=target.label, command=list(target.command))
    run.duration = time.monotonic() - started
    run.results = [shared.results[f.id] for f in fixtures if f.id in shared.results]
    capable = [s for s in sessions if s.capabilities is not None]
    if capable:
        run.capabilities = sorted(capable[0].capabilities or ())
        run.handshake_problems = capable[0].handshake_problems
    run.starts = sum(s.starts for s in sessions)
    return run


def _run_jobs(
    jobs: int,
    target: SdkTarget,
    shared: _Shared,
    options: RunOptions,
    overall: float | None,
    comparer: Comparer,
    on_result: ProgressCallback | None,
) -> None:
    workers = [
        threading.Thread(
            target=_work,
            args=(target, shared, options, overall, comparer, on_result),
            name=f"conform-{target.label}-{n}",
            daemon=True,
        )
        for n in range(jobs)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        while worker.is_alive():
            worker.join(0.2)  # short joins keep the main thread responsive to Ctrl-C


def _work(
    target: SdkTarget,
    shared: _Shared,
    options: RunOptions,
    overall: float | None,
    comparer: Comparer,
    on_result: ProgressCallback | None,
) -> None:
    session = SdkSession(target.factory, options.validator)
    with shared.lock:
        shared.sessions.append(session)
    try:
        _serve(target, session, shared, options, overall, comparer, on_result)
    except Exception:
        if not shared.stop.is_set():  # after Ctrl-C the main thread killed our process: expected
            raise
    finally:
        session.shutdown()


def _serve(
    target: SdkTarget,
    session: SdkSession,
    shared: _Shared,
    options: RunOptions,
    overall: float | None,
    comparer: Comparer,
    on_result: ProgressCallback | None,
) -> None:
    while not shared.stop.is_set():
        try:
            fixture = shared.cases.popleft()
        except IndexError:
            break
        if overall is not None and time.monotonic() >= overall:
            result = _not_run(fixture, f"not run: --max-time of {options.max_time:g} s exceeded")
        else:
            result = run_case(
                session,
                fixture,
                timeout=options.timeout,
                comparer=comparer,
                overall_deadline=overall,
            )
        with shared.lock:
            shared.results[fixture.id] = result
            if on_result is not None:
                on_result(target, result)


def _not_run(fixture: Fixture, reason: str) -> CaseResult:
    return CaseResult(
        id=fixture.id,
        category=fixture.category,
        level=fixture.level,
        outcome=Outcome.ERROR,
        raw_outcome=Outcome.ERROR,
        reason=reason,
    )
