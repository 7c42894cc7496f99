"""Per-case cost over HTTP against the framed session, both reference SDKs, in one run.

`python bench/bench_http.py [--rounds 2] [-k TEXT]` runs the fixtures both transports run (every
exchange fixture: not the `http` ones, which the framed transport skips, nor lifecycle
scenarios, which restart hosts) through `run_suite` against four targets, interleaved per round:
the Python and the Node reference hosts, each framed (`runners/X/conform`) and over HTTP
(`http+cmd:runners/X/conform --http`). Per target it prints the median and mean case duration
(from a case's first frame to its result, host start excluded) and the ratio HTTP / framed,
with the CPU time per case of the bench and of its hosts (`getrusage`, hosts counted once
reaped): on a shared machine the wall figures swing with the others' load, the CPU ones much
less. Best (lowest median) of the rounds: the machine may be shared and noise only slows a run.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fakepeer.cases import load_fixtures  # noqa: E402
from fakepeer.server.lifecycle import play_lifecycle  # noqa: E402
from fakepeer.session import command_target  # noqa: E402
from fakepeer.suite import RunOptions, run_suite  # noqa: E402

TARGETS = {
    "python framed": "runners/python/conform",
    "python http": "http+cmd:runners/python/conform --http",
    "node framed": "runners/node/conform",
    "node http": "http+cmd:runners/node/conform --http",
}


def measure(spec: str, fixtures: list) -> tuple[float, float, int, float, float]:
    """(median, mean) case duration in microseconds, the cases that did not pass, and the CPU
    microseconds per case of the bench and of the host processes."""
    options = RunOptions(timeout=10.0, jobs=1, lifecycle_player=play_lifecycle)
    before = _cpu()
    result = run_suite([command_target(spec, ROOT)], fixtures, options)
    bench, hosts = (after - start for after, start in zip(_cpu(), before, strict=True))
    (sdk,) = result.sdks
    durations = [case.duration * 1e6 for case in sdk.results]
    bad = sum(1 for case in sdk.results if case.raw_outcome.value != "pass")
    count = len(sdk.results) or 1
    return (
        statistics.median(durations),
        statistics.fmean(durations),
        bad,
        bench * 1e6 / count,
        hosts * 1e6 / count,
    )


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("-k", default="", help="only fixtures whose id contains TEXT")
    args = parser.parse_args()
    fixtures = [
        f for f in load_fixtures() if f.category not in ("http", "lifecycle") and args.k in f.id
    ]
    best: dict[str, tuple[float, float, int, float, float]] = {}
    started = time.monotonic()
    for _ in range(args.rounds):
        for label, spec in TARGETS.items():
            figures = measure(spec, fixtures)
            if label not in best or figures[0] < best[label][0]:
                best[label] = figures
    took = time.monotonic() - started
    print(f"{len(fixtures)} cases per target, best of {args.rounds} round(s), {took:.0f} s in all")
    for label, (median, mean, bad, bench, hosts) in best.items():
        print(
            f"  {label:<14} median {median:8.0f} us  mean {mean:8.0f} us  not passed {bad}"
            f"  CPU per case: bench {bench:5.0f} us, host {hosts:5.0f} us"
        )
    for sdk in ("python", "node"):
        framed, http = best[f"{sdk} framed"][0], best[f"{sdk} http"][0]
        print(f"  {sdk}: HTTP / framed = {http / framed:.2f} (median per case)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
