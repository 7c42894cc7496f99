"""Whole runs under fuzz: random programs played to their end on the model server
(fakepeer/server/) with random faults (lost answers, duplicated requests, crashes, host restarts,
requests redelivered or discoveries repeated after their answer, server restarts), holding
invariants across the run rather than per answer.

Invariants (each names what it protects):
- `run-ends`: the run reaches a terminal status (or `blocked`) within the invocation bound;
- `callback-once-per-attempt`: within one delivered invocation each callback or compensator
  starts at most once, and across the run at most once per (run, step, phase, attempt) unless
  a fault made the server deliver that attempt again;
- `compensation-exact`: after a failure the unwind is exactly the completed steps, newest first,
  and only those are compensated;
- `one-receipt-per-emission`: each emitting step is accepted as one event;
- `history-only-grows`: every invoke of a run carries every entry the previous one did, unchanged;
- `attempts-within-policy`: no step is attempted more often than its retry policy allows (its
  `attempts`, or the default 3 of protocol §10.1).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from fakepeer.fuzz.programs import SemanticCase, arr, b, i, o, s
from fakepeer.server.host import HostLink
from fakepeer.server.loop import ModelServer, RunReport
from fakepeer.server.script import Fault, ScriptItem

FAULT_KINDS = ("lost_answer", "duplicate", "crash", "restart", "redeliver", "rediscover")
DEFAULT_ATTEMPTS = 3  # protocol §10.1: the retry an author who declares none gets
ENDED = frozenset({"completed", "failed", "compensation_failed", "timed_out", "blocked", "error"})


@dataclass
class WholeRun:
    """One generated run: the program, the faults, and (after playing) what broke."""

    program: dict
    faults: list[dict]
    broken: list[str] = field(default_factory=list)
    #: Virtual milliseconds at which the server restarts (empty: never).
    restarts: list[int] = field(default_factory=list)
    #: Attempts each step's retry policy allows.
    attempts: dict[str, int] = field(default_factory=dict)


def random_run(rng: random.Random) -> WholeRun:
    """A program of steps (some with compensators, some failing for good), timers, emissions and
    children, and up to three faults aimed at its steps."""
    ops = []
    attempts: dict[str, int] = {}
    for index in range(rng.randint(1, 5)):
        step_id = f"s{index}"
        roll = rng.random()
        if roll < 0.55:
            fields = {"op": s("run"), "id": s(step_id), "echo": b(True), "as": s(step_id)}
            if rng.random() < 0.6:
                fields["compensate"] = b(True)
            if rng.random() < 0.2:
                fields.pop("echo")
                fields["fail"] = o(category=s("app.boom"), retryable=b(rng.random() < 0.5))
                fields["attempts"] = i(rng.randint(1, 3))
            attempts[step_id] = int(fields.get("attempts", i(DEFAULT_ATTEMPTS))["v"])
            ops.append(o(**fields))
        elif roll < 0.7:
            ops.append(
                o(op=s("sleep"), id=s(step_id), duration=s(rng.choice(["1s", "0", "250ms"])))
            )
        elif roll < 0.85:
            ops.append(o(op=s("emit"), id=s(step_id), event=s("fuzz.done"),
                         payload={"t": "bytes", "v": "AP8="}))  # fmt: skip
        else:
            ops.append(o(op=s("invoke"), id=s(step_id), function=s("conform.echo"),
                         input=s(step_id)))  # fmt: skip
    faults = []
    for _ in range(rng.randint(0, 3)):
        when = {"mode": rng.choice(["discover", "forward", "compensate"])}
        if rng.random() < 0.5:
            when["step"] = f"s{rng.randint(0, len(ops) - 1)}"
        faults.append({"fault": rng.choice(FAULT_KINDS), "when": when, "times": 1})
    restarts = [rng.choice((0, 500, 1000, 1500))] if rng.random() < 0.3 else []
    return WholeRun(o(ops=arr(ops)), faults, restarts=restarts, attempts=attempts)


def play(
    link: HostLink,
    run: WholeRun,
    max_invocations: int = 300,
    stop_at: float | None = None,
    server: ModelServer | None = None,
) -> RunReport:
    """Play the run to its end (or `stop_at`) on the model server (`server`, e.g. a fleet's,
    or a new one over `link`), with effect traces and frames kept."""
    if server is None:
        server = ModelServer(link, max_invocations=max_invocations, keep_frames=True, trace=True)
    server.stop_at = stop_at
    script = [ScriptItem(at, "server_restart") for at in run.restarts]
    return server.simulate(
        "conform.program", run.program, script, [Fault.from_json(f) for f in run.faults]
    )


def broken_invariants(report: RunReport, run: WholeRun | None = None) -> list[str]:
    """Every invariant of the module docstring that `report` breaks, one line each
    (`attempts-within-policy` needs the `run`, which knows each step's policy)."""
    found: list[str] = []
    root = report.root
    if report.stopped is not None or root.status not in ENDED:
        found.append(f"run-ends: the run stopped as {root.status!r} ({report.stopped})")
    found += _callbacks_once(report)
    if root.status in ("failed", "compensation_failed"):
        newest_first = list(reversed(root.completion_order))
        undone = root.compensated + root.skipped
        if sorted(undone) != sorted(set(undone)) or not set(undone) <= set(newest_first):
            found.append(f"compensation-exact: unwound {undone}, completed {newest_first}")
        if root.status == "failed" and sorted(undone) != sorted(newest_first):
            found.append(f"compensation-exact: unwound {undone}, completed {newest_first}")
        order = [step for step in newest_first if step in set(root.compensated)]
        if root.compensated != order:
            found.append(f"compensation-exact: compensated {root.compensated}, not newest first")
    sources = [event.source for event in report.events if event.source != "submitted"]
    if len(sources) != len(set(sources)):
        found.append(f"one-receipt-per-emission: accepted {sources}")
    found += _history_grows(report)
    if run is not None:
        found += _attempts_within_policy(report, run)
    return found


def run_problems(
    link: HostLink, run: WholeRun, stop_at: float | None = None
) -> tuple[RunReport, list[str]]:
    """Play `run` (stopped at `stop_at`, a `time.monotonic()`); (its report, what went wrong:
    every broken invariant, then the host's fault if the model server met one, since a host
    that fails mid-run is a finding, not a quiet end)."""
    report = play(link, run, stop_at=stop_at)
    broken = broken_invariants(report, run)
    if report.host_fault:
        broken.append(f"host-fault: {report.host_fault}")
    return report, broken


def _attempts_within_policy(report: RunReport, run: WholeRun) -> list[str]:
    found = []
    for entry in report.timeline.invocations():
        allowed = run.attempts.get(entry.step or "")
        if entry.run == "main" and entry.mode == "forward" and allowed is not None:
            if entry.attempt is not None and entry.attempt > allowed:
                found.append(
                    f"attempts-within-policy: {entry.step} attempt {entry.attempt} of {allowed}"
                )
                break
    return found


def _callbacks_once(report: RunReport) -> list[str]:
    found = []
    seen: dict[tuple, int] = {}
    redelivered: set[tuple] = set()
    for entry in report.timeline.invocations():
        starts = [
            (e["step_id"], e["phase"]) for e in entry.trace or () if e.get("event") == "started"
        ]
        deliveries = 2 if (entry.fault or "").startswith("delivered twice") else 1
        if any(starts.count(start) > deliveries for start in starts):
            found.append(f"callback-once-per-attempt: one invocation started {starts}")
        for step, phase in starts:
            key = (entry.run, step, phase, entry.attempt)
            seen[key] = seen.get(key, 0) + 1
        if entry.fault:  # an answer lost, a host killed, a request delivered twice
            redelivered.add((entry.run, entry.step, entry.attempt))
    for (run, step, phase, attempt), count in seen.items():
        if count > 1 and (run, step, attempt) not in redelivered:
            found.append(f"callback-once-per-attempt: {run} {step} {phase} #{attempt} x{count}")
    return found


def _history_grows(report: RunReport) -> list[str]:
    found = []
    last: dict[str, dict] = {}
    for entry in report.timeline.invocations():
        body = entry.frames.get("invoke") if entry.frames else None
        if not isinstance(body, dict):
            continue
        now = {item["step_id"]: item for item in body.get("history", [])}
        before = last.get(entry.run, {})
        lost = [step for step, item in before.items() if now.get(step) != item]
        if lost:
            found.append(f"history-only-grows: {entry.run} lost or changed {lost}")
        last[entry.run] = now
    return found


def run_campaign(
    link_factory: Callable[[], HostLink], runs: int, seed: int
) -> list[tuple[WholeRun, list[str]]]:
    """Play `runs` random runs; return those that broke an invariant, with what broke."""
    rng = random.Random(seed)
    failures = []
    for _ in range(runs):
        run = random_run(rng)
        broken = broken_invariants(play(link_factory(), run), run)
        if broken:
            failures.append((run, broken))
    return failures


__all__ = [
    "SemanticCase",
    "WholeRun",
    "broken_invariants",
    "play",
    "random_run",
    "run_campaign",
    "run_problems",
]
