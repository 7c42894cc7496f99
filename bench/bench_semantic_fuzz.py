"""Throughput of `fuzz --semantics`: cases per second against each reference SDK, and what the
fuzzer costs without an SDK (drawing a case and asking the oracle).

`python bench/bench_semantic_fuzz.py [--examples 1000] [--repeat 3]`. Best of `--repeat` rounds
(noise on a shared machine only slows a run); pin with `taskset -c 0` for comparable figures.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from fakepeer.fuzz.programs import CASE_BYTES, build_case
from fakepeer.fuzz.semantic_campaign import run_semantic_campaign
from fakepeer.fuzz.semantic_check import expectation_of
from fakepeer.oracle import Unmodeled
from fakepeer.session.targets import command_target

ROOT = Path(__file__).resolve().parents[1]
SDKS = {"python": ROOT / "runners/python/conform", "node": ROOT / "runners/node/conform"}


def oracle_only(examples: int, seed: int) -> float:
    """Cases per second drawn and decided by the oracle, no SDK."""
    rng = random.Random(seed)
    started = time.perf_counter()
    for _ in range(examples):
        try:
            expectation_of(build_case(rng.randbytes(CASE_BYTES)))
        except Unmodeled:
            pass
    return examples / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    best: dict[str, float] = {}
    for round_ in range(options.repeat):
        best["oracle only"] = max(best.get("oracle only", 0), oracle_only(options.examples, round_))
        for name, command in SDKS.items():
            result = run_semantic_campaign(
                command_target(str(command)), options.examples, seed=round_
            )
            rate = result.played / result.seconds  # start-up included
            best[name] = max(best.get(name, 0), rate)
    for line, rate in best.items():
        print(f"{line:12s} {rate:8.1f} cases/s (best of {options.repeat}, {options.examples} each)")


if __name__ == "__main__":
    main()
