"""Shared helpers for the fake peer's own tests (no real fixtures, no real SDKs)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from fakepeer.cases import Scenario

REPO = Path(__file__).resolve().parents[2]
HOSTS = Path(__file__).resolve().parents[1] / "hosts"
TABLE_HOST = HOSTS / "table_host.py"


def run_cli(
    *args: str, cwd: Path = REPO, timeout: float = 120, **popen: object
) -> subprocess.CompletedProcess[str]:
    """`python -m fakepeer ARGS` in `cwd` (default: this checkout), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "fakepeer", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **popen,  # type: ignore[arg-type]
    )


def load_script(name: str) -> ModuleType:
    """The module of `scripts/NAME.py` (scripts/ is no package), freshly executed."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def host_command(name: str) -> list[str]:
    return [sys.executable, str(HOSTS / name)]


def invoke_body(run_id: str, value: object = None) -> dict:
    return {
        "run_id": run_id,
        "function_id": "conform.echo",
        "mode": "discover",
        "input": {"$plain": value},
        "history": [],
    }


def echo_scenario(
    run_id: str,
    *,
    fixture_id: str | None = None,
    expect_value: object = None,
    capabilities: tuple[str, ...] = (),
    level: str = "required",
    category: str = "discovery",
) -> Scenario:
    """A fixture that invokes conform.echo on the table host and expects `completed`."""
    scenario = Scenario(
        fixture_id or f"t.{run_id}",
        f"table host run {run_id}",
        section="tests",
        quote="An invocation contains the run input",
        category=category,
        level=level,
        capabilities=capabilities,
    )
    scenario.send("invoke", invoke_body(run_id, "hi"))
    scenario.expect(
        "completed", {"value": {"$plain": "hi" if expect_value is None else expect_value}}
    )
    return scenario
