#!/usr/bin/env python3
"""Invocations per second of the model server on its virtual clock, per reference SDK.

A `conform.program` of N steps (default 1,000) runs to completion on `fakepeer.server`: N
discoveries and N forward executions (plus a retry, timers and the final discovery), each
carrying the whole history so far (so the work per invocation grows with the run, as on a real
server). The timers span virtual minutes; the run takes seconds of real time. Usage:

    python bench/bench_lifecycle.py [--steps 1000] [--sdk CMD]...
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
FLAKY = {"category": "app.flaky", "message": "once", "retryable": True, "details": {}}


def program(steps: int) -> dict:
    """Step i returns i; step 4 fails once (healed at 500 virtual ms, retried at 1 s); every
    hundredth step is followed by a one-minute durable timer."""
    ops: list[dict] = []
    for index in range(steps):
        step = {"op": "run", "id": f"s{index}", "result": index, "attempts": 2}
        if index == 4:
            failing = {**step, "fail": FLAKY}
            step = {
                "op": "if_ambient",
                "key": "healed",
                "equals": "yes",
                "then": [step],
                "else": [failing],
            }
        ops.append(step)
        if index % 100 == 99:
            ops.append({"op": "sleep", "id": f"t{index}", "duration": "1m"})
    ops.append({"op": "return", "value": steps})
    return expand({"$plain": {"ops": ops}}, ())  # type: ignore[return-value]


def timed(link: object) -> list[float]:
    """Accumulate the real time spent in the host (`link.invoke`) into the returned cell."""
    spent = [0.0]
    invoke = link.invoke  # type: ignore[attr-defined]

    def wrapper(*args: object, **kwargs: object) -> object:
        started = time.perf_counter()
        try:
            return invoke(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    link.invoke = wrapper  # type: ignore[attr-defined]
    return spent


def measure(command: str, steps: int) -> dict:
    session = SdkSession(command_target(command).factory)
    session.ensure_started(None)
    try:
        link = HostLink(session)
        in_host = timed(link)
        server = ModelServer(link)
        script = [ScriptItem(500, "ambient", key="healed", value="yes")]
        started = time.perf_counter()
        report = server.simulate("conform.program", program(steps), script)
        seconds = time.perf_counter() - started
    finally:
        session.shutdown()
    assert report.root.status == "completed", report.root.summary()
    return {
        "sdk": command,
        "steps": steps,
        "invocations": report.invocations,
        "seconds": seconds,
        "per_second": report.invocations / seconds,
        "virtual_ms": report.elapsed_ms,
        "server_us": (seconds - in_host[0]) / report.invocations * 1e6,
    }


def measure_server_alone(steps: int) -> dict:
    """The model server with an in-process scripted host: the loop's own cost, no SDK."""
    link = ScriptedLink(steps_then_complete(*(f"s{index}" for index in range(steps))))
    in_host = timed(link)
    server = ModelServer(link)  # type: ignore[arg-type]
    started = time.perf_counter()
    report = server.simulate("f", {"t": "null"})
    seconds = time.perf_counter() - started
    assert report.root.status == "completed", report.root.summary()
    return {
        "sdk": "model server alone (scripted host)",
        "steps": steps,
        "invocations": report.invocations,
        "seconds": seconds,
        "per_second": report.invocations / seconds,
        "virtual_ms": report.elapsed_ms,
        "server_us": (seconds - in_host[0]) / report.invocations * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--sdk", action="append", help="conformance host command (repeatable)")
    parser.add_argument("--server-only", action="store_true", help="measure the loop alone")
    args = parser.parse_args()
    results = [measure_server_alone(args.steps)]
    if not args.server_only:
        results += [measure(command, args.steps) for command in args.sdk or DEFAULT_SDKS]
    for result in results:
        label = (
            result["sdk"] if result["sdk"].startswith("model") else Path(result["sdk"]).parent.name
        )
        print(
            f"{label}: {result['steps']} steps: "
            f"{result['invocations']} invocations in {result['seconds']:.2f} s "
            f"({result['per_second']:.0f}/s), {result['virtual_ms'] / 1000:.0f} virtual s; "
            f"the server's own share {result['server_us']:.0f} µs per invocation"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
