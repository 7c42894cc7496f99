"""Whole-run fuzz against the server mutants: which faulty model servers the random whole runs
(`fakepeer/fuzz/wholerun.py`: random programs; random lost answers, duplicated requests,
crashes, host restarts, redeliveries, repeated discoveries and server restarts; run-wide
invariants) catch, and after how many runs. No scenario is played.

Why: SERVER_KILL_MATRIX.md proves the hand-written lifecycle scenarios catch each server mutant;
this says how much of that the generated runs catch on their own, so a fault nobody wrote a
scenario for has a chance. Regenerate from the repository root with:

    nice python -m tests.server.wholerun_hunt [--runs 300] [--seed 26] [NAME ...]

It plays the same runs (one seed) against the unpatched server first: a run that breaks an
invariant there is a bug of the fuzzer or the SDK, not a kill, and the hunt stops.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from fakepeer.fuzz.wholerun import random_run, run_problems
from fakepeer.server.host import HostLink
from fakepeer.session.sdk import SdkSession
from fakepeer.session.targets import default_target

from .mutants import BY_NAME, MUTANTS, apply

HERE = Path(__file__).resolve().parent
OUT = HERE / "WHOLERUN_HUNT.md"

#: Why the generated runs cannot show a mutant's fault (the invariants hold either way, or the
#: generator never makes the situation): read against the mutant's fault and wholerun.py.
WHY_NOT = {
    "timer-rearmed": "no invariant looks at when a timer fires (a re-armed timer only fires later)",
    "wait-reregistered": "the generator writes no waits and submits no events",
    "child-recreated": "a re-created echo child ends the same way; no invariant counts children",
    "disagreeing-declaration-adopted": "a generated program never changes between invocations",
    "repeated-step-dispatched-again": "needs a rediscovery while a step's work is pending, then "
    "a second start of the same attempt on another delivery (rare in 1-5 step programs)",
    "second-event-accepted": "needs an emission's acceptance repeated after a lost answer or a "
    "redelivery (rare: emissions are 15% of ops, faults aim at one step)",
    "anchor-at-run-start": "no invariant looks at when a timer fires",
    "function-bound-dropped": "the generated registry has no run timeouts (conform.program)",
    "invoke-bound-dropped": "the generated children have no invoke timeout",
    "parent-bound-dropped": "no run deadline, so no parent bound",
    "policy-default-ignored": "the runs use no server policy",
    "policy-maximum-clamped": "the runs use no server policy",
    "children-cancelled-at-parent-deadline": "no run deadline",
    "attempt-reused": "a generated program never changes, so no step becomes obsolete",
    "retries-off-by-one": "needs a step that fails for good with a retryable error",
    "unwind-in-completion-order": "needs two compensable steps completed before a failure "
    "escapes (the invariant checks newest first; the combination is rare)",
    "skip-not-recorded": "needs a completed step without compensator in an unwind",
    "stale-answer-applied": "needs a redelivered forward request answered after its step settled",
    "replay-budget-unchecked": "generated runs stay far below the replay budget",
    "replay-budget-off-by-one": "generated runs stay far below the replay budget",
    "history-requirements-ignored": "one worker: routing has no choice",
    "capacity-ignored": "one worker: routing has no choice",
    "restart-forgets-schedule": "needs a server restart while a timer or retry is pending",
    "restart-reanchors": "a re-anchored timer only fires later: no invariant looks at when",
    "lost-attempt-repeated-like-discovery": "an attempt whose answer was lost is exempt from "
    "callback-once-per-attempt, and no invariant looks at the backoff before it is invoked again",
    "lost-discovery-recovered-like-attempt": "needs more lost discoveries of one run than the "
    "default retry policy's three attempts (faults act once)",
    "wait-matches-earlier-event": "the generator writes no waits and submits no events",
    "settled-declarations-unwound": "needs a completed timer, child or emission before a failure "
    "that escapes (rare), and the unwind's model run may show it only as a skip",
    "uncompensated-steps-not-targeted": "needs a completed step without compensator before a "
    "failure that escapes",
    "obsolete-forward-retried": "a generated program never changes, so no target becomes obsolete",
    "child-outcome-dropped": "no invariant looks at a step's value (a child's value is unread)",
    "emission-metadata-dropped": "no invariant looks at an event's metadata; nothing waits on it",
    "triggers-ignored": "the generated registry (conform.program) has no trigger on fuzz.done",
    "receipt-not-event-identity": "no invariant looks at a receipt's value",
    "step-failure-compensates-at-once": "no invariant looks at whether an unwind is preceded by "
    "a discovery; the compensations are the same",
}


def hunt(name: str | None, runs: int, seed: int) -> dict:
    """Play `runs` seeded whole runs against the server (with mutant `name` patched in)."""
    session = SdkSession(default_target().factory)
    rng = random.Random(seed)
    started = time.monotonic()
    row: dict = {"name": name, "found": False, "after": runs, "problem": ""}
    try:
        session.ensure_started(time.monotonic() + 30)
        with apply(name) if name else _nothing():
            for index in range(runs):
                run = random_run(rng)
                _, broken = run_problems(HostLink(session), run)
                if broken:
                    row.update(found=True, after=index + 1, problem="; ".join(broken))
                    break
    finally:
        session.shutdown()
    row["seconds"] = time.monotonic() - started
    return row


class _nothing:  # noqa: N801 - a stand-in context manager for the unpatched server
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def render(rows: list[dict], runs: int, seed: int, baseline: dict) -> str:
    """The Markdown file: totals, then one row per mutant."""
    found = [row for row in rows if row["found"]]
    lines = [
        "# Whole-run fuzz against the server mutants",
        "",
        "Generated by `nice python -m tests.server.wholerun_hunt "
        f"--runs {runs} --seed {seed}`; do not edit by hand. Each server mutant "
        "(tests/server/mutants.py) got up to "
        f"{runs} random whole runs of `fuzz --whole-runs` (seed {seed}, the same runs for each, "
        "the Python reference SDK, no scenario); a mutant is found when a run breaks one of the "
        "run-wide invariants (fakepeer/fuzz/wholerun.py). The unpatched server played the same "
        f"{baseline['after']} runs first and broke nothing ({baseline['seconds']:.0f} s).",
        "",
        f"Found: {len(found)} of {len(rows)} server mutants.",
        "",
        "| mutant | found | runs | seconds | broken invariant / why not |",
        "|---|---|---:|---:|---|",
    ]
    for row in rows:
        why = (
            row["problem"]
            if row["found"]
            else WHY_NOT.get(row["name"], "not found (no reason written yet)")
        )
        why = why.replace("|", "\\|").replace("\n", " ")[:240]
        lines.append(
            f"| `{row['name']}` | {'yes' if row['found'] else 'no'} | {row['after']} | "
            f"{row['seconds']:.1f} | {why} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="server mutants (default: all)")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--out", type=Path, default=OUT)
    options = parser.parse_args(argv)
    unknown = sorted(set(options.names) - set(BY_NAME))
    if unknown:
        print(
            f"wholerun_hunt: error: unknown server mutant(s): {', '.join(unknown)}", file=sys.stderr
        )
        return 2
    baseline = hunt(None, options.runs, options.seed)
    if baseline["found"]:
        print(
            f"wholerun_hunt: error: the unpatched server broke: {baseline['problem']}",
            file=sys.stderr,
        )
        return 1
    print(
        f"baseline: {options.runs} runs, nothing broken ({baseline['seconds']:.0f} s)", flush=True
    )
    rows = []
    for name in options.names or [mutant.name for mutant in MUTANTS]:
        row = hunt(name, options.runs, options.seed)
        rows.append(row)
        mark = "found" if row["found"] else "missed"
        print(f"{name}: {mark} after {row['after']} run(s) ({row['seconds']:.1f} s)", flush=True)
    options.out.write_text(render(rows, options.runs, options.seed, baseline), "utf-8")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
