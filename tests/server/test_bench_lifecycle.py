"""bench/bench_lifecycle.py: its short program runs to completion on both reference SDKs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> object:
    spec = importlib.util.spec_from_file_location(
        "bench_lifecycle", ROOT / "bench" / "bench_lifecycle.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["bench_lifecycle"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("sdk", ["python", "node"])
def test_the_program_is_short_and_runs_as_child_runs_past_one_runs_steps(
    sdk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _bench()
    assert len(str(bench.program(1000))) < 2000  # type: ignore[attr-defined]
    monkeypatch.setattr(bench, "RUN_STEPS", 50)
    result = bench.measure(str(ROOT / "runners" / sdk / "conform"), 120)  # type: ignore[attr-defined]
    # Three child runs (50, 50, 20 steps and a flaky first step each), every one to completion.
    assert result["steps"] == 120
    assert result["entries"] > 0
    floor = bench.measure_server_alone(120)  # type: ignore[attr-defined]
    assert "x the server alone" in bench.line(result, floor)  # type: ignore[attr-defined]
