#!/usr/bin/env python3
"""Replay cost per history entry of each reference SDK, with the model server alone as the floor.

A `conform.program` of N steps runs to completion on `fakepeer.server` on its virtual clock: N
discoveries and N forward executions (plus a retry, a timer per hundred steps and the final
discovery), each carrying the whole history so far, as RFD 2's invocations do. So the run's
total grows with the square of N, and what an SDK controls is its cost per history entry. The
program is short whatever N (`repeat`, docs/host-contract.md §13.2), so the figure is replay,
not the copying of a program as long as the run.

One run's history holds at most 1,024 entries (docs/protocol.md §3.4), so a step count over
1,000 runs as child runs of 1,000 steps each, one after the other (`invoke`). Usage:

    python bench/bench_lifecycle.py [--steps 100 --steps 1000 --steps 2000] [--sdk CMD]...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fakepeer.cases.macros import expand  # noqa: E402
from fakepeer.server.host import HostLink  # noqa: E402
from fakepeer.server.loop import ModelServer  # noqa: E402
from fakepeer.server.script import ScriptItem  # noqa: E402
from fakepeer.server.scripted import ScriptedLink, steps_then_complete  # noqa: E402
from fakepeer.session.sdk import SdkSession  # noqa: E402
from fakepeer.session.targets import command_target  # noqa: E402

ROOT = HERE.parent
DEFAULT_SDKS = [
    str(ROOT / "runners" / "python" / "conform"),
    str(ROOT / "runners" / "node" / "conform"),
]
DEFAULT_STEPS = [100, 1000, 2000]
RUN_STEPS = 1000  # the most steps one run holds: 1,000 + 10 timers + 1 flaky step <= 1,024
FLAKY = {"category": "app.flaky", "message": "once", "retryable": True, "details": {}}


def _ops(steps: int) -> list[dict]:
    """A flaky first step (healed at 500 virtual ms, retried at 1 s), then `steps` steps with a
    one-minute durable timer after every hundred: twenty-odd ops whatever `steps`."""
    flaky = {"op": "run", "id": "flaky", "attempts": 2}
    ops: list[dict] = [
        {
            "op": "if_ambient",
            "key": "healed",
            "equals": "yes",
            "then": [flaky],
            "else": [{**flaky, "fail": FLAKY}],
        }
    ]
    hundreds, rest = divmod(steps, 100)
    block = [{"op": "repeat", "times": 100, "ops": [{"op": "run", "id": "s"}]}]
    ops.append(
        {
            "op": "repeat",
            "times": hundreds,
            "ops": [*block, {"op": "sleep", "id": "t", "duration": "1m"}],
        }
    )
    if rest:
        ops.append({"op": "repeat", "times": rest, "ops": [{"op": "run", "id": "r"}]})
    return ops


def program(steps: int) -> dict:
    """The tagged input of an N-step program: one run, or child runs of `RUN_STEPS` each."""
    if steps <= RUN_STEPS:
        ops = [*_ops(steps), {"op": "return", "value": steps}]
    else:
        children, rest = divmod(steps, RUN_STEPS)
        sizes = [RUN_STEPS] * children + ([rest] if rest else [])
        ops = [
            {
                "op": "invoke",
                "id": f"child{index}",
                "function": "conform.program",
                "input": {"$tagged": program(size)},
            }
            for index, size in enumerate(sizes)
        ]
        ops.append({"op": "return", "value": steps})
    return expand({"$plain": {"ops": ops}}, ())  # type: ignore[return-value]


class Metered:
    """Wraps a link's `invoke`: the real time spent in the host and the history entries sent."""

    def __init__(self, link: object) -> None:
        self.seconds = 0.0
        self.entries = 0
        self._invoke = link.invoke  # type: ignore[attr-defined]
        link.invoke = self.invoke  # type: ignore[attr-defined]

    def invoke(self, body: dict, *args: object, **kwargs: object) -> object:
        self.entries += len(body.get("history", ()))
        started = time.perf_counter()
        try:
            return self._invoke(body, *args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def _result(label: str, steps: int, report: object, seconds: float, meter: Metered) -> dict:
    assert report.root.status == "completed", report.root.summary()  # type: ignore[attr-defined]
    return {
        "label": label,
        "steps": steps,
        "invocations": report.invocations,  # type: ignore[attr-defined]
        "entries": meter.entries,
        "seconds": seconds,
        "host_seconds": meter.seconds,
    }


def measure(command: str, steps: int) -> dict:
    session = SdkSession(command_target(command).factory)
    session.ensure_started(None)
    try:
        link = HostLink(session)
        meter = Metered(link)
        server = ModelServer(link)
        script = [ScriptItem(500, "ambient", key="healed", value="yes")]
        started = time.perf_counter()
        report = server.simulate("conform.program", program(steps), script)
        seconds = time.perf_counter() - started
    finally:
        session.shutdown()
    return _result(Path(command).parent.name, steps, report, seconds, meter)


def measure_server_alone(steps: int) -> dict:
    """The model server with an in-process scripted host: the loop's own cost, no SDK."""
    link = ScriptedLink(steps_then_complete(*(f"s{index}" for index in range(steps))))
    meter = Metered(link)
    server = ModelServer(link)  # type: ignore[arg-type]
    started = time.perf_counter()
    report = server.simulate("f", {"t": "null"})
    seconds = time.perf_counter() - started
    return _result("model server alone", steps, report, seconds, meter)


def line(result: dict, floor: dict) -> str:
    """One result: totals, the cost per history entry sent, and the multiple of the floor."""
    per_entry = result["host_seconds"] / max(result["entries"], 1) * 1e6
    return (
        f"{result['label']:>18}: {result['steps']:>5} steps,"
        f" {result['invocations']:>5} invocations,"
        f" {result['entries']:>9,} history entries: {result['seconds']:7.2f} s"
        f" ({result['seconds'] / floor['seconds']:6.1f}x the server alone);"
        f" in the host {per_entry:5.2f} µs per entry,"
        f" {result['host_seconds'] / result['invocations'] * 1e3:6.2f} ms per invocation"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, action="append", help="steps (repeatable)")
    parser.add_argument("--sdk", action="append", help="conformance host command (repeatable)")
    parser.add_argument("--server-only", action="store_true", help="measure the loop alone")
    args = parser.parse_args()
    for steps in args.steps or DEFAULT_STEPS:
        floor = measure_server_alone(steps)
        print(line(floor, floor), flush=True)
        if not args.server_only:
            for command in args.sdk or DEFAULT_SDKS:
                print(line(measure(command, steps), floor), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
