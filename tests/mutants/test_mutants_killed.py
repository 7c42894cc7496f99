"""Every mutant SDK (a reference SDK with one fault) must fail at least one named fixture.

Each mutant is shown killed by a witness (`witness.py`): a fixture KILL_MATRIX.md names as its
killer, played alone on a fresh host against it, failing the run, and passing against its SDK's
baseline; a mutant without one (a new mutant, a killer that no longer kills, a claim that no
required fixture kills it) is searched over the whole corpus as the full matrix does. The
catalog is split into chunks, one test each, so `pytest -n auto` spreads them. Regenerate the
committed matrix (every mutant over the whole corpus, half an hour of CPU):
`python -m tests.mutants.kill_matrix`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fakepeer.cases import load_fixtures, repository_root
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import Outcome, SdkTarget, command_target, default_target
from fakepeer.suite import RunOptions, run_suite

from .kill_matrix import (
    BASELINE,
    MATRIX_FILE,
    NODE_BASELINE,
    catalog,
    run_mutant,
    sdk_of,
    unapplicable_mutants,
)
from .node_mutants import NODE_MUTANTS
from .patches import MUTANTS
from .witness import prove_caught, summary

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


#: Python mutants per chunk (one test each); the other SDKs' catalogs are a chunk each.
CHUNK = 40


def _chunks() -> dict[str, list[str]]:
    """Chunk id -> its mutants: each SDK's catalog in slices of `CHUNK`, in catalog order."""
    by_sdk: dict[str, list[str]] = {}
    for name in catalog():
        by_sdk.setdefault(sdk_of(name), []).append(name)
    chunks = {}
    for sdk, names in by_sdk.items():
        count = -(-len(names) // CHUNK)
        for index in range(count):
            chunks[f"{sdk}-{index + 1}of{count}"] = names[index * CHUNK : (index + 1) * CHUNK]
    return chunks


def test_every_mutant_patch_applies() -> None:
    unapplicable = unapplicable_mutants(catalog())
    assert not unapplicable, (
        "these mutant patches no longer apply to their reference SDK (update tests/mutants/"
        "patches.py or node_mutant_host.js):"
        f" {unapplicable}"
    )


def test_chunks_cover_the_catalog_once() -> None:
    listed = [name for names in _chunks().values() for name in names]
    assert sorted(listed) == sorted(catalog()) and len(set(listed)) == len(listed)


@pytest.mark.parametrize("chunk", sorted(_chunks()))
def test_every_mutant_is_killed(chunk: str) -> None:
    """Every mutant of the chunk is killed (alone, failing the run); a known survivor still
    survives; a recommended-only mutant is caught as designed (two warnings, no kill)."""
    names = _chunks()[chunk]
    matrix = prove_caught(names, exhaustive=KNOWN_SURVIVORS)
    print("\n" + summary(matrix))
    survivors = sorted(set(matrix.survivors()) - set(KNOWN_SURVIVORS))
    assert not survivors, f"no fixture catches these mutant SDKs: {survivors}"
    killed = sorted(name for name in KNOWN_SURVIVORS if matrix.kills.get(name))
    assert not killed, f"now caught by a fixture: remove from KNOWN_SURVIVORS: {killed}"
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
    expected = run_suite(
        [reference()], fixtures, RunOptions(timeout=5.0, jobs=2, lifecycle_player=play_lifecycle)
    ).sdks[0]
    wrapped = run_mutant(baseline, fixtures)
    assert {c.id: c.raw_outcome for c in wrapped.results} == {
        c.id: c.raw_outcome for c in expected.results
    }
    # only the fixtures of the HTTP mapping are skipped over stdio (capability `http`, §1.1)
    http_only = {f.id for f in fixtures if "http" in f.capabilities}
    assert all(c.raw_outcome is not Outcome.SKIP for c in wrapped.results if c.id not in http_only)
