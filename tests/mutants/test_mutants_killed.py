"""Every mutant SDK (a reference SDK with one fault) must fail at least one named fixture.

Runs the bench's Python API over the whole corpus once per mutant of both reference SDKs
(several minutes on 2 cores) and prints the kill matrix. Regenerate the committed copy:
`python -m tests.mutants.kill_matrix`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fakepeer.cases import load_fixtures, repository_root
from fakepeer.session import Outcome, SdkTarget, command_target, default_target
from fakepeer.suite import RunOptions, run_suite

from .kill_matrix import (
    BASELINE,
    MATRIX_FILE,
    NODE_BASELINE,
    KillMatrix,
    build_kill_matrix,
    catalog,
    render_text,
    run_mutant,
)
from .node_mutants import NODE_MUTANTS
from .patches import MUTANTS

#: The effect-only faults (only the effect trace shows them) mirrored in the Node SDK.
EFFECT_ONLY = (
    "replay-reruns-discarded",
    "suspension-catchable",
    "discovery-runs-next-callback",
    "compensates-replayed-steps",
    "target-duplicate-unchecked",
)

#: Mutants no fixture catches yet, each with the fixture that is missing. The test fails when
#: one of them is killed, so this list only shrinks (tests/mutants/KILL_MATRIX.md lists them).
#: `out-of-turn-answers-dropped` left it: it breaks recommended behaviour only (D-OUT-OF-TURN,
#: `recommended_only` in its catalog entry), and two recommended fixtures catch it as designed.
KNOWN_SURVIVORS: dict[str, str] = {}


@pytest.fixture(scope="module")
def matrix() -> KillMatrix:
    built = build_kill_matrix(jobs=2)
    print("\n" + render_text(built))
    return built


def test_every_mutant_patch_applies(matrix: KillMatrix) -> None:
    assert not matrix.unapplicable, (
        "these mutant patches no longer apply to their reference SDK (update tests/mutants/"
        "patches.py or node_mutant_host.js):"
        f" {matrix.unapplicable}"
    )


def test_every_mutant_is_killed(matrix: KillMatrix) -> None:
    survivors = sorted(set(matrix.survivors()) - set(KNOWN_SURVIVORS))
    assert not survivors, f"no fixture catches these mutant SDKs: {survivors}"


def test_known_survivors_still_survive(matrix: KillMatrix) -> None:
    killed = sorted(name for name in KNOWN_SURVIVORS if matrix.kills.get(name))
    assert not killed, f"now caught by a fixture: remove from KNOWN_SURVIVORS: {killed}"


def test_recommended_only_mutants_are_caught_as_designed(matrix: KillMatrix) -> None:
    """A fault in recommended behaviour only is caught as a warning by two fixtures, alone; one
    a required fixture kills is not recommended-only (its catalog entry must lose the mark)."""
    killed = sorted(name for name in matrix.recommended_only if matrix.kills.get(name))
    assert not killed, f"killed by a required fixture: drop `recommended_only`: {killed}"
    thin = sorted(n for n in matrix.recommended_only if not matrix.caught_as_designed(n))
    assert not thin, f"caught as a warning by fewer than two fixtures: {thin}"


def test_catalog_is_large_enough() -> None:
    assert len(MUTANTS) >= 20
    assert all(name in MUTANTS and f"node:{name}" in NODE_MUTANTS for name in EFFECT_ONLY)


def test_committed_kill_matrix_lists_every_mutant() -> None:
    text = MATRIX_FILE.read_text(encoding="utf-8")
    missing = [name for name in catalog() if f"| `{name}` |" not in text]
    assert not missing, f"stale KILL_MATRIX.md: python -m tests.mutants.kill_matrix ({missing})"


@pytest.mark.parametrize(
    ("baseline", "reference"),
    [
        (BASELINE, default_target),
        (NODE_BASELINE, lambda: command_target(str(repository_root() / "runners/node/conform"))),
    ],
    ids=["python", "node"],
)
def test_baseline_wrapper_agrees_with_the_reference_host(
    baseline: str, reference: Callable[[], SdkTarget]
) -> None:
    """A wrapper host without a mutant must behave exactly as its SDK's own reference host."""
    fixtures = load_fixtures()
    expected = run_suite([reference()], fixtures, RunOptions(timeout=5.0, jobs=2)).sdks[0]
    wrapped = run_mutant(baseline, fixtures)
    assert {c.id: c.raw_outcome for c in wrapped.results} == {
        c.id: c.raw_outcome for c in expected.results
    }
    # only the fixtures of the HTTP mapping are skipped over stdio (capability `http`, §1.1)
    http_only = {f.id for f in fixtures if "http" in f.capabilities}
    assert all(c.raw_outcome is not Outcome.SKIP for c in wrapped.results if c.id not in http_only)
