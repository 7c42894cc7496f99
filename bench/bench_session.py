#!/usr/bin/env python3
"""Cases per second: the full bench against a table-driven host vs a raw framed echo.

Both run over the same kind of pipe to a Python subprocess. A bench case is what `ryusen-conform
run` does per fixture: `conform.reset` and its ack, one `invoke` and its answer, JSON decoding,
schema validation, canonical comparison, `conform.trace` and its answer (the effect trace), the
wire log and the result record. The raw echo sends the same three frames, one round trip each,
with no work at all. The bench is judged per
case once the host is up (as the echo is); the whole run, spawn included, is printed too. Usage:

    python bench/bench_session.py [--cases 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from table_sdk import write_table  # noqa: E402

from fakepeer.cases import Scenario  # noqa: E402
from fakepeer.session import SdkTarget  # noqa: E402
from fakepeer.suite import RunOptions, run_suite  # noqa: E402
from fakepeer.transport import SubprocessTransport  # noqa: E402

TABLE = Path(tempfile.mkdtemp(prefix="ryusen-bench-")) / "answers.bin"
atexit.register(shutil.rmtree, TABLE.parent, True)


def make_fixtures(count: int) -> list:
    """Distinct fixtures shaped like real ones: an invoke of conform.echo with a small object."""
    fixtures = []
    for n in range(count):
        value = {"$plain": {"order": f"A-{n}", "qty": n, "price": 1.5, "tags": ["x", "y"]}}
        body = {
            "run_id": f"run-{n}",
            "function_id": "conform.echo",
            "mode": "discover",
            "input": value,
            "history": [],
        }
        scenario = Scenario(
            f"bench.case-{n:05d}", "bench", section="bench", quote="bench", category="discovery"
        )
        scenario.send("invoke", body).expect("completed", {"value": value})
        fixtures.append(scenario.build())
    return fixtures


def answer_table(fixtures: list) -> list[tuple[bytes, bytes]]:
    """What the table host answers to each invoke: `completed` with the invoke's own input.

    Computed here once, so the host answers by a look-up of the request bytes (no JSON work).
    """
    pairs = []
    for fixture in fixtures:
        send = fixture.steps[0]
        envelope = {
            "version": "1.0",
            "kind": "completed",
            "id": send.envelope["id"],
            "body": {"value": send.envelope["body"]["input"]},
        }
        pairs.append((send.payload, json.dumps(envelope, separators=(",", ":")).encode()))
    return pairs


class Timing(NamedTuple):
    """One bench run: the whole `run_suite` call, and its steady state between case results."""

    whole: float  # spawn, handshake, every case, shutdown
    steady: float  # from the first case's result to the last one's: cases 2..N


def bench_session(fixtures: list, validate: bool = True) -> Timing:
    argv = [sys.executable, str(HERE / "table_sdk.py"), str(TABLE)]
    target = SdkTarget("bench-table", argv, lambda: SubprocessTransport(argv))
    options = RunOptions(timeout=5.0, validator=None if validate else (lambda envelope: []))
    stamps: list[float] = []
    started = time.perf_counter()
    result = run_suite(
        [target], fixtures, options, lambda _t, _r: stamps.append(time.perf_counter())
    )
    elapsed = time.perf_counter() - started
    passed = sum(1 for case in result.sdks[0].results if case.outcome == "pass")
    if passed != len(fixtures):
        bad = next(case for case in result.sdks[0].results if case.outcome != "pass")
        raise SystemExit(f"bench case failed: {bad.id}: {bad.reason}\n{bad.diff}")
    return Timing(elapsed, stamps[-1] - stamps[0])


RESET = b'{"version":"1.0","kind":"conform.reset","id":"bench.reset#1","body":{}}'
TRACE = b'{"version":"1.0","kind":"conform.trace","id":"bench.effects#1","body":{}}'


def bench_raw_echo(fixtures: list, host: str = "echo_host.py", trace: bool = True) -> Timing:
    """The frames of a bench case, one round trip each, through the same transport class:
    `conform.reset`, the invoke and (with `trace`, as every bench case since the effect trace)
    `conform.trace`.

    `steady` is the loop alone, once the host answers; `whole` adds starting the host (about as
    long as the whole loop) and waiting for it to exit.
    """
    started = time.perf_counter()
    transport = SubprocessTransport([sys.executable, str(HERE / host), str(TABLE)])
    payloads = [fixture.steps[0].payload for fixture in fixtures]
    try:
        transport.send(RESET)  # the first answer waits for the host's interpreter to start:
        transport.receive()  # that belongs to the whole run, not to the per-case loop
        looping = time.perf_counter()
        for payload in payloads:
            transport.send(RESET)
            transport.receive()
            transport.send(payload)
            transport.receive()
            if trace:
                transport.send(TRACE)
                transport.receive()
        steady = time.perf_counter() - looping
    finally:
        transport.close(wait=1.0)  # end of input: the host exits
    return Timing(time.perf_counter() - started, steady)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    fixtures = make_fixtures(args.cases)
    write_table(TABLE, answer_table(fixtures))
    bench_raw_echo(fixtures[:100])  # warm up imports and caches on both sides
    bench_session(fixtures[:100])
    # Best of N, interleaved: the machine may be shared, and noise only ever slows a run down.
    names = ("whole", "steady", "stubbed", "echo", "echo_whole", "echo_two", "table")
    runs: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.repeat):
        timing = bench_session(fixtures)
        runs["whole"].append(timing.whole)
        runs["steady"].append(timing.steady)
        runs["stubbed"].append(bench_session(fixtures, False).steady)
        echo = bench_raw_echo(fixtures)
        runs["echo"].append(echo.steady)
        runs["echo_whole"].append(echo.whole)
        runs["echo_two"].append(bench_raw_echo(fixtures, trace=False).steady)
        runs["table"].append(bench_raw_echo(fixtures, "table_sdk.py").steady)
    report(args.cases, {name: min(seconds) for name, seconds in runs.items()})
    # each round's own ratio: the bench and the echo measured a few seconds apart, under the
    # same conditions (this VM's speed drifts by a third from one minute to the next)
    rounds = [
        echo / args.cases / (steady / (args.cases - 1))
        for echo, steady in zip(runs["echo"], runs["steady"], strict=True)
    ]
    print(
        f"ratio per round: {', '.join(f'{ratio:.2f}' for ratio in rounds)} "
        f"(median {statistics.median(rounds):.2f})"
    )


def report(cases: int, best: dict[str, float]) -> None:
    """Print one line per measurement, then the ratio the bench is judged by."""

    def line(name: str, seconds: float, count: int, note: str) -> None:
        rate, cost = count / seconds, seconds * 1e6 / count
        print(f"{name:<34} {rate:7.0f} cases/s  {cost:5.1f} us/case  {note}")

    steady = cases - 1  # the steady state spans the gaps between N case results
    line("bench (table SDK)", best["steady"], steady, "per case, after spawn and handshake")
    line("bench, whole run", best["whole"], cases, "run_suite incl. spawn, handshake, shutdown")
    line("bench, validation stubbed", best["stubbed"], steady, "the difference is validation")
    line("raw framed echo", best["echo"], cases, "same 3 frames, 1 round trip each, no work")
    line(
        "raw framed echo, whole run", best["echo_whole"], cases, "incl. start and exit of the host"
    )
    line("raw framed echo, 2 frames", best["echo_two"], cases, "no trace: the floor before #9")
    line("raw table SDK", best["table"], cases, "same frames to the table host, no bench work")
    fixed = best["whole"] - best["steady"] * cases / steady
    print(f"fixed cost of a bench run (spawn, handshake, shutdown): {fixed * 1e3:.0f} ms")
    per_case = best["steady"] / steady
    print(f"ratio bench / raw echo, per case: {best['echo'] / cases / per_case:.2f}")
    print(f"ratio bench / 2-frame echo, per case: {best['echo_two'] / cases / per_case:.2f}")
    print(
        f"ratio, whole runs: {best['echo_whole'] / best['whole']:.2f} (spawn on both sides); "
        f"{best['echo'] / best['whole']:.2f} (bench spawn against the echo loop alone)"
    )


if __name__ == "__main__":
    main()
