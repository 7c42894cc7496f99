"""What a fleet costs: the lifecycle scenarios on each reference SDK alone against the same
scenarios served by the pair (`@fleet`, `@rolling`), from one real run of the command line.

`python bench/bench_fleet.py [--sdk CMD --sdk CMD] [-k EXPR]` runs `python -m fakepeer run
--variants fleet,rolling -k lifecycle` with two SDKs, reads its JSON report and prints, per SDK
and per fleet variant, the cases and the sum of their case times, and the pair's whole time
(its host starts and `fleet.publication` included), with the date and the load average.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDKS = ["runners/python/conform", "runners/node/conform"]


def measure(sdks: list[str], expression: str) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [sys.executable, "-m", "fakepeer", "run", "--variants", "fleet,rolling"]
        for sdk in sdks:
            command += ["--sdk", sdk]
        command += ["-k", expression, "--timeout", "20", "--report-json", str(report)]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the run did not pass:\n{done.stdout[-3000:]}{done.stderr}")
        document = json.loads(report.read_text(encoding="utf-8"))
    lines = []
    for sdk in document["sdks"]:
        by_category: dict[str, list[float]] = {}
        for case in sdk["cases"]:
            if case["outcome"] == "pass":
                by_category.setdefault(case["category"], []).append(case.get("duration", 0.0))
        for category, times in sorted(by_category.items()):
            lines.append(f"{sdk['label']}: {category}: {len(times)} cases, {sum(times):.1f} s")
        lines.append(f"{sdk['label']}: whole run {sdk['duration']:.1f} s")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sdk", action="append", help="two SDK commands (default: both references)"
    )
    parser.add_argument("-k", default="lifecycle", help="the scenarios (default: lifecycle)")
    options = parser.parse_args()
    sdks = options.sdk or SDKS
    if len(sdks) != 2:
        parser.error("give exactly two --sdk")
    load = os.getloadavg()[0]
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load {load:.1f}")
    for line in measure(sdks, options.k):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
