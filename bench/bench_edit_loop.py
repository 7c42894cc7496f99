"""The edit-run loop's wall times: `run -k ONE`, `run --list`, `fixtures validate` (issue 22).

    python bench/bench_edit_loop.py [--repeat 5] [--fixture values.bytes-empty]

Each command runs as a user runs it (`python -m fakepeer ...`, a fresh process), `--repeat`
times, cold (an empty fixture cache) once and then warm; it prints the best and the median wall
time of the warm runs and the load average, since the machine may be shared. Pin it with
`taskset -c 0` to compare figures. Python is let write bytecode (a user's installed package has
it), whatever PYTHONDONTWRITEBYTECODE says.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _time(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fakepeer", *args],
        cwd=ROOT,
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fixture", default="values.bytes-empty")
    parser.add_argument("--no-cache", action="store_true", help="RYUSEN_CONFORM_CACHE=off")
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
            cold = _time(args, env)
            warm = [_time(args, env) for _ in range(options.repeat)]
            print(
                f"{name:32} cold {cold:6.2f} s   warm best {min(warm):5.2f} s, "
                f"median {statistics.median(warm):5.2f} s"
            )
        print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
