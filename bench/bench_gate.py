"""Where the whole gate's time goes: `run --variants all` against both reference SDKs, split into
the bench's own work and the wait for the hosts.

`python bench/bench_gate.py [--repeat 3] [--sdk CMD ...] [--variants all] [-k EXPR] [--profile 25]`

Each round runs the real command line (`python -m fakepeer run --variants all --sdk ...`) in a
child process that reports, as it exits, its own CPU time (user + sys of all its threads, from
the interpreter's start to its exit: imports, loading and deriving the fixtures, every case,
the reports) and the CPU time of the hosts it started and waited for. Its wall time splits so:

- **bench**: the command's own CPU time, our Python;
- **host**: the hosts' CPU time (their start-up, handshake and answers);
- **other waiting**: the rest: wake-ups across the pipes, the bench's deliberate listening
  windows (for a late copy of an answer at a session's end, before a fresh-process variant's
  host is discarded) and, on a shared machine, time queued behind other processes.

The gate's cases run one at a time (`--jobs 1`, the default), the bench and a host taking turns,
so bench / wall is the share of the user's wait that is the bench's (goal, issue 34: at most
20%); the share of the CPU time (bench / (bench + host)) is printed too: a loaded machine
stretches the wall time, not the CPU time. Best of `--repeat` rounds by wall time.

`--profile N` adds one run under cProfile (clock: this process's CPU time, so time spent waiting
is not counted) and prints the N functions with the most CPU time of their own, then the same
for cumulative time: where the bench's share goes.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDKS = ["runners/python/conform", "runners/node/conform"]

#: Runs the command line in this child and writes its CPU times (and a profile) when it ends.
DRIVER = """
import cProfile, json, resource, sys, time
from fakepeer.cli import main
report, profile, args = sys.argv[1], sys.argv[2], sys.argv[3:]
profiler = cProfile.Profile(time.process_time) if profile else None
if profiler is not None:
    profiler.enable()
status = main(args)
if profiler is not None:
    profiler.disable()
    profiler.dump_stats(profile)
me = resource.getrusage(resource.RUSAGE_SELF)
hosts = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(report, "w", encoding="utf-8") as out:
    json.dump({"bench": me.ru_utime + me.ru_stime, "host": hosts.ru_utime + hosts.ru_stime}, out)
sys.exit(status)
"""


@dataclass
class Round:
    wall: float
    bench: float
    host: float
    cases: int

    @property
    def waiting(self) -> float:
        """Wall time that is neither the bench's CPU nor the hosts'."""
        return max(0.0, self.wall - self.bench - self.host)


def run_once(sdks: list[str], variants: str, profile: str = "", select: str = "") -> Round:
    """One gate run through the command line, in a child process; its wall and CPU times."""
    command = ["run", "--variants", variants, *(["-k", select] if select else [])]
    for sdk in sdks:
        command += ["--sdk", sdk]
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as folder:
        report = Path(folder) / "times.json"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(report), profile, *command],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        times = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    last = done.stdout.rstrip().splitlines()[-1] if done.stdout.strip() else ""
    match = re.fullmatch(r"(\d+) passed, (\d+) failed(?:, (\d+) errors)?(?:, (\d+) skipped)?", last)
    if done.returncode != 0 or match is None or not times:
        raise SystemExit(f"the gate did not pass:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    cases = sum(int(group or 0) for group in match.groups())
    return Round(wall, times["bench"], times["host"], cases)


def show(label: str, got: Round) -> None:
    """One line: the wall time and its three parts, with the bench's shares."""
    share = got.bench / got.wall
    cpu_share = got.bench / (got.bench + got.host) if got.bench + got.host else 0.0
    print(
        f"{label}: {got.cases} cases, wall {got.wall:.2f} s = bench {got.bench:.2f} s "
        f"({share:.0%}) + host {got.host:.2f} s ({got.host / got.wall:.0%}) + other waiting "
        f"{got.waiting:.2f} s ({got.waiting / got.wall:.0%}); "
        f"bench share of the CPU {cpu_share:.0%}",
        flush=True,
    )


def show_profile(path: str, count: int) -> None:
    stats = pstats.Stats(path)
    stats.strip_dirs()
    for key, title in (("tottime", "own CPU time"), ("cumulative", "cumulative CPU time")):
        print(f"\n--- the bench's {count} functions with the most {title}")
        stats.sort_stats(key).print_stats(count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sdk", action="append", help="default: both reference SDKs")
    parser.add_argument("--variants", default="all")
    parser.add_argument("-k", dest="select", default="", help="run -k EXPR (default: all)")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    sdks = args.sdk or SDKS
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    rounds = [run_once(sdks, args.variants, select=args.select) for _ in range(args.repeat)]
    for index, got in enumerate(rounds, 1):
        show(f"round {index}", got)
    show("best", min(rounds, key=lambda got: got.wall))
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="bench-gate-") as folder:
            path = str(Path(folder) / "gate.prof")
            show("profiled (slower)", run_once(sdks, args.variants, path, args.select))
            show_profile(path, args.profile)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
