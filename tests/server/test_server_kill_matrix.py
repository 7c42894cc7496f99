"""The committed SERVER_KILL_MATRIX.md is current, and its mutants really die.

Regenerating the whole matrix takes minutes (`python -m tests.server.kill_matrix`), so this test
checks what goes stale cheaply: the committed file lists exactly today's mutant catalog and
today's lifecycle scenarios, every mutant in it was killed by at least two scenarios, and one
mutant, played live, is still killed by the scenarios the file names.
"""

from __future__ import annotations

import sys

import pytest

from fakepeer.server.loop import ModelServer

from . import kill_matrix
from .mutants import MUTANTS, _global


def _rows() -> dict[str, int]:
    rows = {}
    for line in kill_matrix.MATRIX_FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = int(cells[2])
    return rows


def test_committed_matrix_lists_the_catalog_and_the_corpus() -> None:
    mutants, scenarios = kill_matrix.committed()
    regenerate = "stale SERVER_KILL_MATRIX.md: python -m tests.server.kill_matrix"
    assert mutants == {mutant.name for mutant in MUTANTS}, regenerate
    assert scenarios == {f.id for f in kill_matrix.lifecycle_scenarios()}, regenerate


def test_every_server_mutant_is_killed_by_two_scenarios() -> None:
    weak = {name: kills for name, kills in _rows().items() if kills < kill_matrix.MIN_KILLS}
    assert not weak, f"server mutants killed by fewer than {kill_matrix.MIN_KILLS}: {weak}"


def test_attempt_reuse_mutant_is_still_killed_live() -> None:
    """Today's behaviour before D-ATTEMPT-IDENTITY fails both attempt-identity scenarios."""
    ids = {
        "lifecycle.redeclared-obsolete-step-new-operation",
        "lifecycle.redeclared-obsolete-step-after-failed-attempts",
    }
    chosen = [f for f in kill_matrix.lifecycle_scenarios() if f.id in ids]
    matrix = kill_matrix.build(["attempt-reused"], chosen)
    assert matrix.baseline_failures == []
    assert set(matrix.kills["attempt-reused"]) == ids


def test_every_unshown_server_sentence_is_explained_in_coverage_md() -> None:
    """Done when: each server-side sentence is shown by a scenario a server mutant fails, or
    docs/coverage.md says why no run observes it."""
    from fakepeer.cases import repository_root

    text = (repository_root() / "docs" / "coverage.md").read_text(encoding="utf-8")
    section = text.split("## Server-side sentences no lifecycle run shows", 1)[-1]
    missing = [n for n in kill_matrix.unshown_sentences() if f"R{n:03d}" not in section]
    assert not missing, f"server-side sentences neither shown nor explained: {missing}"


def test_the_matrix_runs_against_the_node_sdk_too() -> None:
    """`--sdk runners/node/conform`: the same mutants die against the other reference SDK (the
    classification mutant here, on the two scenarios that quote S6 and S8)."""
    ids = {
        "lifecycle.lost-answers-recovered-by-classification",
        "lifecycle.discovery-host-killed-repeatedly-invoked-again",
    }
    chosen = [f for f in kill_matrix.lifecycle_scenarios() if f.id in ids]
    matrix = kill_matrix.build(
        ["lost-discovery-recovered-like-attempt"], chosen, kill_matrix.NODE_SDK
    )
    assert matrix.baseline_failures == []
    assert set(matrix.kills["lost-discovery-recovered-like-attempt"]) == ids
    assert matrix.sdk == kill_matrix.NODE_SDK


def test_the_committed_kills_read_back_as_the_rows_count_them() -> None:
    """`--incremental` starts from the committed cells: each row's list reads back whole."""
    kills = kill_matrix.committed_kills()
    assert {name: len(killers) for name, killers in kills.items()} == _rows()
    scenarios = {f.id for f in kill_matrix.lifecycle_scenarios()}
    assert all(set(killers) <= scenarios for killers in kills.values())


def test_a_module_level_patch_lands_where_the_method_reads_the_name() -> None:
    """A mutant that changes a module-level name (server_error, MAX_VALUE_BYTES, derived_id)
    patches it in the module of the method that reads it, so the mutant follows the method if
    it moves; a method that does not read the name is refused, never a mutant that changes
    nothing."""
    home = sys.modules[ModelServer._route.__module__]
    with _global(ModelServer._route, "MAX_VALUE_BYTES", 7):
        assert home.MAX_VALUE_BYTES == 7
    assert home.MAX_VALUE_BYTES != 7
    with pytest.raises(AssertionError, match="does not read"):
        _global(ModelServer._emit, "MAX_VALUE_BYTES", 7)
