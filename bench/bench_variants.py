"""What the derived variants cost: the whole corpus against both reference SDKs, plain and with
`--variants all`, through the real command line (`python -m fakepeer run`).

`python bench/bench_variants.py [--repeat 3] [--sdk CMD ...]` runs the two command lines in turn,
`--repeat` rounds, interleaved so a shared machine's noise hits both alike, and prints for each
the best wall time, the CPU time of the bench and its hosts (user + sys of the children, less
sensitive to other load), the case count, and the ratio all/plain. The goal (issue 9): under 4x.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDKS = ["runners/python/conform", "runners/node/conform"]


def run_once(variants: str, sdks: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the bench and everything it started, cases run)."""
    command = [sys.executable, "-m", "fakepeer", "run", "--variants", variants]
    for sdk in sdks:
        command += ["--sdk", sdk]
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    last = done.stdout.rstrip().splitlines()[-1] if done.stdout.strip() else ""
    match = re.fullmatch(r"(\d+) passed, (\d+) failed(?:, (\d+) skipped)?", last)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"--variants {variants} did not pass:\n{done.stdout[-3000:]}{done.stderr}")
    cases = sum(int(group or 0) for group in match.groups())
    return wall, cpu, cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sdk", action="append", help="default: both reference SDKs")
    args = parser.parse_args()
    sdks = args.sdk or SDKS
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.repeat):
        for variants in ("none", "all"):
            wall, cpu, cases = run_once(variants, sdks)
            old = best.get(variants)
            best[variants] = (
                min(wall, old[0]) if old else wall,
                min(cpu, old[1]) if old else cpu,
                cases,
            )
    for variants, (wall, cpu, cases) in best.items():
        print(f"--variants {variants:4}  {cases:6} cases  wall {wall:7.2f} s  cpu {cpu:7.2f} s")
    plain, full = best["none"], best["all"]
    print(f"ratio all/plain: wall {full[0] / plain[0]:.2f}x, cpu {full[1] / plain[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
