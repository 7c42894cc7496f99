#!/usr/bin/env python3
"""Peak memory of a run: 1x and 10x the corpus, with and without reports, and huge answers.

Each figure is the peak resident set size (`ru_maxrss`) of a fresh Python process that loads
the corpus, runs it against the bundled Python reference host (a subprocess, not counted) and,
with reports, writes the JSON, HTML, JUnit and Markdown reports. "10x" runs every fixture ten
times under ten distinct ids: the copies share their loaded steps, so the figure shows what the
run itself keeps per case (results, wire logs, diffs), which is what must not grow. The huge
line runs N echo cases against `huge_host.py`, which answers each with a legal 15.9 MiB frame.

    python bench/bench_memory.py [--huge-cases 24]

Goal (issue 10): 10x costs at most 1.3x the peak of 1x, with and without reports; the huge
host stays under HUGE_BOUND_MB (see bench/README.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

HUGE_BOUND_MB = 400
RATIO_GOAL = 1.3


def child(copies: int, reports: bool, huge_cases: int) -> None:
    """Run once and print the peak RSS in MB (as JSON, with the outcome counts)."""
    from fakepeer.cases import load_fixtures
    from fakepeer.report import RunInfo, catalog_from_fixtures, reporters, to_document
    from fakepeer.session import command_target
    from fakepeer.suite import RunOptions, run_suite

    if huge_cases:
        sys.path.insert(0, str(HERE))
        from bench_session import make_fixtures

        fixtures = make_fixtures(huge_cases)
        target = command_target(f"{sys.executable} {HERE / 'huge_host.py'}")
    else:
        corpus = load_fixtures()
        fixtures = [
            dataclasses.replace(fixture, id=f"{fixture.id}~{copy}" if copy else fixture.id)
            for copy in range(copies)
            for fixture in corpus
        ]
        target = command_target(str(ROOT / "runners" / "python" / "conform"))
    result = run_suite([target], fixtures, RunOptions(timeout=30))
    if reports:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            info = RunInfo(catalog=catalog_from_fixtures(fixtures))
            document = to_document(result, info)
            for reporter in reporters():  # every format, as `run` writes them
                reporter.write(document, out / reporter.name)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": round(peak, 1), "counts": result.counts()}))


def measure(copies: int, reports: bool, huge_cases: int = 0) -> dict:
    argv = [sys.executable, __file__, "--child", str(copies), str(int(reports)), str(huge_cases)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--huge-cases", type=int, default=24)
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], bool(args.child[1]), args.child[2])
        return 0
    ok = True
    for reports in (False, True):
        one, ten = measure(1, reports), measure(10, reports)
        ratio = ten["peak_mb"] / one["peak_mb"]
        ok = ok and ratio <= RATIO_GOAL
        label = "with reports" if reports else "no reports  "
        print(
            f"corpus {label}: 1x {one['peak_mb']:7.1f} MB ({sum(one['counts'].values())} cases)"
            f"   10x {ten['peak_mb']:7.1f} MB ({sum(ten['counts'].values())} cases)"
            f"   ratio {ratio:.2f} (goal <= {RATIO_GOAL})"
        )
    for reports in (False, True):
        huge = measure(1, reports, args.huge_cases)
        ok = ok and huge["peak_mb"] <= HUGE_BOUND_MB
        label = "with reports" if reports else "no reports  "
        print(
            f"15.9 MiB answers {label}: {args.huge_cases} cases, peak {huge['peak_mb']:.1f} MB "
            f"(bound {HUGE_BOUND_MB} MB)"
        )
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
