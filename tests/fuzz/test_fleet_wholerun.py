"""`fuzz --whole-runs N` with several SDKs: each random run also played on the fleet of them
all (random routing) against the first SDK alone; a divergence is printed, shrunk, with its
routing seed. The reference pair never diverges; a fleet mutant does."""

from __future__ import annotations

import sys

import pytest

from fakepeer.cases import repository_root
from fakepeer.cli import main

ROOT = repository_root()
PYTHON = str(ROOT / "runners" / "python" / "conform")
NODE = str(ROOT / "runners" / "node" / "conform")
MUTANT = f"{sys.executable} {ROOT / 'tests' / 'mutants' / 'mutant_host.py'}"


def _fuzz(capsys: pytest.CaptureFixture[str], *sdks: str, runs: str) -> tuple[int, str]:
    args = ["fuzz", "--whole-runs", runs, "--seed", "5"]
    for sdk in sdks:
        args += ["--sdk", sdk]
    status = main(args)
    return status, capsys.readouterr().out


def test_the_reference_pair_never_diverges(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _fuzz(capsys, PYTHON, NODE, runs="8")
    assert status == 0, out
    assert "=== fleet of 2 SDKs" in out
    assert f"played 8 whole run(s) alone and on the fleet {PYTHON}+{NODE}" in out
    assert out.rstrip().endswith("seed 5, 0 diverged")


def test_a_fleet_mutant_diverges_and_is_shrunk(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _fuzz(capsys, NODE, f"{MUTANT} fleet.journal-over-history", runs="6")
    assert status == 1
    fleet = out.split("=== fleet of 2 SDKs", 1)[1]
    assert "FLEET RUN 1 diverged: host-fault on the fleet: invocation" in fleet
    assert "answered by fleet.journal-over-history" in fleet
    assert "although the history it was sent settles it" in fleet
    assert "  shrunk to: " in fleet and "  routing: random, seed " in fleet
