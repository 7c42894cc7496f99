"""Every mutant SDK (the reference with one fault) must fail at least one named fixture.

Runs the bench's Python API over the whole corpus once per mutant (about a minute on 2 cores)
and prints the kill matrix. Regenerate the committed copy:
`python -m tests.mutants.kill_matrix`.
"""

from __future__ import annotations

import pytest

from fakepeer.cases import load_fixtures
from fakepeer.session import Outcome, default_target
from fakepeer.suite import RunOptions, run_suite

from .kill_matrix import (
    BASELINE,
    MATRIX_FILE,
    KillMatrix,
    build_kill_matrix,
    render_text,
    run_mutant,
)
from .patches import MUTANTS

#: Mutants no fixture catches yet, each with the fixture that is missing. The test fails when
#: one of them is killed, so this list only shrinks (tests/mutants/KILL_MATRIX.md lists them).
KNOWN_SURVIVORS: dict[str, str] = {}


@pytest.fixture(scope="module")
def matrix() -> KillMatrix:
    built = build_kill_matrix(jobs=2)
    print("\n" + render_text(built))
    return built


def test_every_mutant_patch_applies(matrix: KillMatrix) -> None:
    assert not matrix.unapplicable, (
        "these mutant patches no longer apply to runners/python (update tests/mutants/patches.py):"
        f" {matrix.unapplicable}"
    )


def test_every_mutant_is_killed(matrix: KillMatrix) -> None:
    survivors = sorted(set(matrix.survivors()) - set(KNOWN_SURVIVORS))
    assert not survivors, f"no fixture catches these mutant SDKs: {survivors}"


def test_known_survivors_still_survive(matrix: KillMatrix) -> None:
    killed = sorted(name for name in KNOWN_SURVIVORS if matrix.kills.get(name))
    assert not killed, f"now caught by a fixture: remove from KNOWN_SURVIVORS: {killed}"


def test_catalog_is_large_enough() -> None:
    assert len(MUTANTS) >= 20


def test_committed_kill_matrix_lists_every_mutant() -> None:
    text = MATRIX_FILE.read_text(encoding="utf-8")
    missing = sorted(name for name in MUTANTS if f"| `{name}` |" not in text)
    assert not missing, f"stale KILL_MATRIX.md: python -m tests.mutants.kill_matrix ({missing})"


def test_baseline_wrapper_agrees_with_the_reference_host() -> None:
    """The wrapper host without a mutant must behave exactly as the bundled reference host."""
    fixtures = load_fixtures()
    reference = run_suite([default_target()], fixtures, RunOptions(timeout=5.0, jobs=2)).sdks[0]
    wrapped = run_mutant(BASELINE, fixtures)
    assert {c.id: c.raw_outcome for c in wrapped.results} == {
        c.id: c.raw_outcome for c in reference.results
    }
    assert all(c.raw_outcome is not Outcome.SKIP for c in wrapped.results)
