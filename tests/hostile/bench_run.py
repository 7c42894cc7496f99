"""Run the whole bench (the `ryusen-conform run` command, end to end) against a hostile host.

Why end to end: tests/transport and tests/session check one hostile behaviour at a time;
here the question is whether a *whole run* survives one: every case gets an outcome, the run
ends within a bound derived from its timeouts, and no process of the host outlives it.
Every host process is marked with an environment variable so `/proc` can be scanned for it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from fakepeer.cases import Scenario
from fakepeer.cases.loader import repository_root

HOSTS = Path(__file__).resolve().parents[1] / "hosts"
MARK_VARIABLE = "RYUSEN_HOSTILE_MARK"
CASES = tuple(f"hostile.case-{n:02d}" for n in range(1, 7))
#: Start-up, handshake, respawn and kill grace of a whole run, on a slow machine.
OVERHEAD_SECONDS = 20.0


@dataclass
class BenchRun:
    """What one bench run produced, and what it left behind."""

    status: int
    elapsed: float
    output: str
    report: dict
    leftovers: list[int]

    @property
    def sdk(self) -> dict:
        return self.report["sdks"][0]

    def case(self, case_id: str) -> dict:
        return next(case for case in self.sdk["cases"] if case["id"] == case_id)

    def outcomes(self) -> dict[str, str]:
        return {case["id"]: case["raw_outcome"] for case in self.sdk["cases"]}


def write_fixtures(root: Path, cases: tuple[str, ...] = CASES) -> Path:
    """One conform.echo fixture per case id, each with its own value; the folder."""
    for index, case in enumerate(cases, start=1):
        scenario = Scenario(
            case,
            f"echo {index} (hostile host test)",
            section="hostile host tests",
            quote="An invocation contains the run input",
            category="values",
        )
        body = {
            "run_id": f"run-{index}",
            "function_id": "conform.echo",
            "mode": "discover",
            "input": {"$plain": f"value {index}"},
            "history": [],
        }
        scenario.send("invoke", body)
        scenario.expect("completed", {"value": {"$plain": f"value {index}"}})
        scenario.write(root)
    return root


def host_command(script: str, *args: str) -> str:
    """The `--sdk` command line of a hostile host."""
    return shlex.join([sys.executable, str(HOSTS / script), *map(str, args)])


def marked_processes(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries the mark."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for_no_marked(mark: str, seconds: float = 3.0) -> list[int]:
    """Marked processes still alive after a short settling time (reaping is asynchronous)."""
    deadline = time.monotonic() + seconds
    while True:
        left = marked_processes(mark)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def run_bench(sdk: str, fixtures: Path, tmp: Path, timeout: float, *extra: str) -> BenchRun:
    """`python -m fakepeer run` on `fixtures` only, with the host processes marked."""
    mark = uuid.uuid4().hex
    report = tmp / f"report-{mark}.json"
    argv = [
        sys.executable, "-m", "fakepeer", "run", "--sdk", sdk,
        "--fixtures", str(fixtures), "--no-default-fixtures",
        "--timeout", str(timeout), "--report-json", str(report), *extra,
    ]  # fmt: skip
    env = dict(os.environ, **{MARK_VARIABLE: mark})
    bound = OVERHEAD_SECONDS + timeout * len(list(fixtures.rglob("*.json"))) * 2
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=repository_root(), env=env, capture_output=True, timeout=bound, check=False
        )
    finally:
        leftovers = wait_for_no_marked(mark)
        for pid in leftovers:  # never leave them behind, even when the test fails
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
    elapsed = time.monotonic() - started
    # stderr first, so the last line is the summary the bench prints last on stdout
    output = done.stderr.decode("utf-8", "replace") + done.stdout.decode("utf-8", "replace")
    document = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return BenchRun(done.returncode, elapsed, output, document, leftovers)


def time_bound(timeout: float, hung_cases: int, starts: int) -> float:
    """How long a run may take: each hung case costs its timeout, each start a kill grace."""
    return OVERHEAD_SECONDS + hung_cases * timeout + starts * 2.0


def shard_reports(fixtures: Path, folder: Path, sdk: str, count: int = 2) -> list[Path]:
    """The JSON reports of `run --shard K/count` of `fixtures` against `sdk`, K = 1..count,
    as `folder/shardK.json` (each run must exit 0 or 1: a verdict)."""
    reports = []
    for index in range(1, count + 1):
        report = folder / f"shard{index}.json"
        done = subprocess.run(
            [
                sys.executable, "-m", "fakepeer", "run", "--fixtures", str(fixtures),
                "--no-default-fixtures", "--shard", f"{index}/{count}", "--sdk", sdk,
                "--report-json", str(report),
            ],
            cwd=repository_root(), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stdout + done.stderr
        reports.append(report)
    return reports
