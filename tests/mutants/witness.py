"""Every mutant caught, shown by witnesses: the killers KILL_MATRIX.md names, replayed alone.

Why: the full matrix (every mutant over the whole corpus in a shared session, then each failure
alone) costs half an hour of CPU on two cores, while the test suite needs to know only that each
mutant is still killed. A kill is existential: one fixture that fails the run against the mutant
alone, on a fresh host, and passes against its SDK's baseline proves it, by the very definition
`kill_matrix.build_kill_matrix` uses. So each mutant's committed killers (up to two) are played
alone against it; the baseline plays them too. The whole corpus is searched, by
`build_kill_matrix` itself, only where a witness cannot settle the question:

- a mutant with no row in KILL_MATRIX.md yet, or whose named killers no longer kill it;
- a universal claim: a mutant breaking recommended behaviour only (no required fixture may kill
  it, and two recommended fixtures must catch it), or a known survivor (no fixture kills it).

The result is a `KillMatrix` whose `kills` hold the witnesses found (a subset of the killers a
full regeneration lists); `survivors()`, `caught_as_designed()` and `unapplicable` mean what they
mean for a full matrix.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Sequence

from fakepeer.cases import Fixture, load_fixtures

from . import kill_matrix as km
from .prove import ProveError, parse_markdown

#: Killers replayed per mutant: one proves it is killed; two make a flaky witness harmless.
WITNESSES = 2


def committed_killers(text: str | None = None) -> dict[str, list[str]]:
    """Mutant -> the fixtures KILL_MATRIX.md names as its killers; {} when unreadable (then
    every mutant is searched over the whole corpus)."""
    try:
        source = km.MATRIX_FILE.read_text(encoding="utf-8") if text is None else text
        return parse_markdown(source).matrix.kills
    except (OSError, UnicodeDecodeError, ProveError):
        return {}


def prove_caught(
    names: Sequence[str],
    exhaustive: Collection[str] = (),
    fixtures: Sequence[Fixture] | None = None,
    timeout: float = km.CASE_TIMEOUT,
    hints: dict[str, list[str]] | None = None,
) -> km.KillMatrix:
    """Which of `names` are killed (a witness each, or a full search), as a `KillMatrix`.

    `exhaustive`: mutants searched over the whole corpus whatever the file says (a claim that
    no fixture kills them)."""
    started = time.monotonic()
    selected = list(fixtures) if fixtures is not None else load_fixtures()
    by_id = {fixture.id: fixture for fixture in selected}
    known = committed_killers() if hints is None else hints
    unapplicable = km.unapplicable_mutants(names)
    chosen = [name for name in names if name not in unapplicable]
    designed = km.recommended_only_of(chosen)
    searched = [name for name in chosen if name in exhaustive or name in designed]
    witnesses: dict[str, list[str]] = {}
    for name in chosen:
        if name in searched:
            continue
        playable = [ident for ident in known.get(name, []) if _plays(name, by_id.get(ident))]
        if playable:
            witnesses[name] = playable[:WITNESSES]
        else:
            searched.append(name)
    broken = _baseline_failures(witnesses, by_id, timeout)
    kills: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    for name, ids in witnesses.items():
        sdk = km.sdk_of(name)
        played = [by_id[ident] for ident in ids if ident not in broken[sdk]]
        run = km.run_mutant(name, played, timeout, isolate=True) if played else None
        found = sorted(km.gate_failing_ids(run)) if run is not None else []
        if found:
            kills[name] = found
            warnings[name] = sorted(km.failing_ids(run) - set(found))
        else:  # the file's killers no longer kill it: the whole corpus decides
            searched.append(name)
    witnessed = time.monotonic()
    full = km.build_kill_matrix(searched, selected, jobs=1, timeout=timeout) if searched else None
    needs_neighbours: dict[str, list[str]] = {}
    baseline_failures = {sdk: sorted(ids) for sdk, ids in broken.items()}
    if full is not None:
        kills.update(full.kills)
        warnings.update(full.warnings)
        needs_neighbours.update(full.needs_neighbours)
        unapplicable.update(full.unapplicable)
        for sdk, ids in full.baseline_failures.items():
            baseline_failures[sdk] = sorted({*baseline_failures.get(sdk, []), *ids})
    finished = time.monotonic()
    return km.KillMatrix(
        fixtures=sorted(by_id),
        baseline_failures=baseline_failures,
        kills={name: kills.get(name, []) for name in chosen},
        seconds=finished - started,
        unapplicable=unapplicable,
        needs_neighbours=needs_neighbours,
        warnings=warnings,
        recommended_only=designed,
        stages={
            "witnessed": float(len(chosen) - len(searched)),
            "witness_seconds": witnessed - started,
            "searched": float(len(searched)),
            "search_seconds": finished - witnessed,
        },
    )


def _plays(name: str, fixture: Fixture | None) -> bool:
    """Whether `fixture` exists and is one the mutant plays (the HTTP surface's mutants play
    only the fixtures of the HTTP mapping, as in the full matrix)."""
    if fixture is None:
        return False
    return not km.sdk_of(name).endswith("-http") or "http" in fixture.capabilities


def _baseline_failures(
    witnesses: dict[str, list[str]], by_id: dict[str, Fixture], timeout: float
) -> dict[str, set[str]]:
    """SDK -> the witnesses its unpatched baseline fails (never kills), in one shared session
    per SDK, as the full matrix plays its baselines."""
    broken: dict[str, set[str]] = {}
    for sdk, baseline in km.BASELINES.items():
        mine = [found for name, found in witnesses.items() if km.sdk_of(name) == sdk]
        ids = sorted({ident for found in mine for ident in found})
        broken[sdk] = set()
        if ids:
            broken[sdk] = km.failing_ids(km.run_mutant(baseline, [by_id[i] for i in ids], timeout))
    return broken


def summary(matrix: km.KillMatrix) -> str:
    """How each mutant was shown caught: the matrix's text and where the time went."""
    stages = matrix.stages
    return (
        f"{km.render_text(dataclasses.replace(matrix, stages={}))}\n"
        f"{stages.get('witnessed', 0):.0f} mutant(s) killed by a committed killer replayed alone "
        f"({stages.get('witness_seconds', 0):.0f} s); {stages.get('searched', 0):.0f} searched "
        f"over the whole corpus ({stages.get('search_seconds', 0):.0f} s)"
    )
