"""The edit-run loop's wall times: `run -k ONE`, `run --list`, `fixtures validate` (issue 22).

    python bench/bench_edit_loop.py [--repeat 5] [--fixture values.bytes-empty]

Each command runs as a user runs it (`python -m fakepeer ...`, a fresh process), `--repeat`
times, cold (an empty fixture cache) once and then warm; it prints the best and the median wall
time of the warm runs, their best CPU time (process and children: the figure others' load moves
least) and the load average, since the machine may be shared. Pin it with
`taskset -c 0` to compare figures. Python is let write bytecode (a user's installed package has
it), whatever PYTHONDONTWRITEBYTECODE says.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _time(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children: less moved by others' load)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fakepeer", *args],
        cwd=ROOT,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fixture", default="values.bytes-empty")
    parser.add_argument("--no-cache", action="store_true", help="RYUSEN_CONFORM_CACHE=off")
    parser.add_argument("--only", default="", help="only the commands whose name has this text")
    options = parser.parse_args()
    commands = {
        f"run -k {options.fixture}": ["run", "-k", options.fixture],
        "run --list": ["run", "--list"],
        "fixtures validate": ["fixtures", "validate"],
    }
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["RYUSEN_CONFORM_CACHE"] = "off" if options.no_cache else folder
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(ROOT / "fakepeer")],
            check=False,
            stdout=subprocess.DEVNULL,
        )
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for name, args in commands.items():
            if options.only and options.only not in name:
                continue
            cold, cold_cpu = _time(args, env)
            warm = [_time(args, env) for _ in range(options.repeat)]
            walls, cpus = [w for w, _ in warm], [c for _, c in warm]
            print(
                f"{name:32} cold {cold:6.2f} s ({cold_cpu:.2f} CPU)   warm best {min(walls):5.2f} s"
                f", median {statistics.median(walls):5.2f} s; CPU best {min(cpus):5.2f} s"
            )
        print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
