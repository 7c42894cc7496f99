"""Whole-run fuzz against server mutants: the retry bound and server restarts are checked."""

from __future__ import annotations

import random

from fakepeer.fuzz.wholerun import random_run

from .mutants import MUTANTS
from .wholerun_hunt import WHY_NOT, hunt


def test_a_retry_past_the_policy_breaks_attempts_within_policy() -> None:
    row = hunt("retries-off-by-one", runs=30, seed=26)
    assert row["found"], row
    assert "attempts-within-policy" in row["problem"]


def test_the_unpatched_server_breaks_nothing_on_the_same_runs() -> None:
    row = hunt(None, runs=10, seed=26)
    assert not row["found"], row["problem"]


def test_generated_runs_restart_the_server_and_redeliver() -> None:
    rng = random.Random(26)
    runs = [random_run(rng) for _ in range(200)]
    assert any(run.restarts for run in runs)
    kinds = {fault["fault"] for run in runs for fault in run.faults}
    assert {"redeliver", "rediscover"} <= kinds


def test_every_reason_names_a_server_mutant() -> None:
    # a mutant added later may have none yet (its miss then says "no reason written yet")
    assert set(WHY_NOT) <= {mutant.name for mutant in MUTANTS}
