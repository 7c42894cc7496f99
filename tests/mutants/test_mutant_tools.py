"""The mutant tools answer for themselves: both wrapper hosts' `--help` and `kill_matrix --only`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .node_mutants import NODE_MUTANTS
from .patches import MUTANTS

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_mutant_host_help_lists_the_mutants() -> None:
    done = _run("tests/mutants/mutant_host.py", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: mutant_host.py NAME")
    assert "  replay-reruns-callback: " in done.stdout
    bad = _run("tests/mutants/mutant_host.py", "--bogus")
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_kill_matrix_only_checks_one_mutant_and_writes_nothing() -> None:
    before = (ROOT / "tests" / "mutants" / "KILL_MATRIX.md").read_text(encoding="utf-8")
    done = _run(
        "-m", "tests.mutants.kill_matrix", "--only", "replay-reruns-callback", "-k", "replay."
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay.callback-not-rerun" in done.stdout
    assert (ROOT / "tests" / "mutants" / "KILL_MATRIX.md").read_text(encoding="utf-8") == before
    unknown = _run("-m", "tests.mutants.kill_matrix", "--only", "no-such-mutant")
    assert unknown.returncode == 2 and "unknown mutant" in unknown.stderr


NODE_HOST = "tests/mutants/node_mutant_host.js"


def _node(*argv: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None or not (ROOT / "runners" / "node" / "node_modules").is_dir():
        pytest.fail("the Node SDK is not installed: run `npm ci --prefix runners/node`")
    return subprocess.run([node, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_node_mutant_host_lists_the_catalog_and_every_patch_applies() -> None:
    done = _node(NODE_HOST, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: node_mutant_host.js NAME")
    for name, fault in NODE_MUTANTS.items():
        assert f"  {name}: {fault}\n" in done.stdout
    checked = _node(NODE_HOST, "--check")
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stdout + checked.stderr
    bad = _node(NODE_HOST, "--bogus")
    assert bad.returncode == 2 and "usage:" in bad.stderr
    unknown = _node(NODE_HOST, "node:no-such-mutant")
    assert unknown.returncode == 2 and "unknown mutant" in unknown.stderr


def test_node_patch_whose_target_is_gone_is_reported() -> None:
    """A patch must fail loudly when the SDK lost what it wraps, never silently do nothing."""
    context = (ROOT / "runners" / "node" / "src" / "context.js").as_uri()
    remove = f"data:text/javascript,import {{Pass}} from '{context}'; delete Pass.prototype.claim;"
    done = _node("--import", remove, NODE_HOST, "--check", "node:target-duplicate-unchecked")
    assert done.returncode == 1
    assert (
        done.stdout
        == "node:target-duplicate-unchecked: Error: the mutant patch found no method claim\n"
    )


def test_kill_matrix_only_checks_a_node_mutant_against_the_node_baseline() -> None:
    done = _run(
        "-m",
        "tests.mutants.kill_matrix",
        "--only",
        "node:target-duplicate-unchecked",
        "-k",
        "target-id-repeated-after-refusal",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "baseline fails: node 0" in done.stdout
    assert "forward.target-id-repeated-after-refusal-blocked" in done.stdout


def test_a_recommended_only_mutant_is_caught_by_two_warnings_and_never_hides_a_survivor() -> None:
    """Issue 20: a fault in recommended behaviour only is no survivor when two recommended
    fixtures catch it alone; with one it survives; an ordinary mutant with warnings survives."""
    from .kill_matrix import KillMatrix, render_markdown, render_text

    def matrix(warned: list[str], mark: bool) -> KillMatrix:
        return KillMatrix(
            fixtures=["a", "b"],
            baseline_failures={},
            kills={"out-of-turn-answers-dropped": []},
            seconds=1.0,
            unapplicable={},
            warnings={"out-of-turn-answers-dropped": warned},
            recommended_only={"out-of-turn-answers-dropped": "D-OUT-OF-TURN"} if mark else {},
        )

    designed = matrix(["a", "b"], mark=True)
    assert designed.survivors() == [] and designed.thin() == []
    text = render_markdown(designed)
    assert "## Faults in recommended behaviour only" in text
    assert "caught as a warning by 2 fixtures, by design not a gate failure" in text
    assert "0 surviving mutants; 0 caught by fewer than two" in text
    assert "recommended only (D-OUT-OF-TURN)" in render_text(designed)
    assert matrix(["a"], mark=True).survivors() == ["out-of-turn-answers-dropped"]
    assert matrix(["a", "b"], mark=False).survivors() == ["out-of-turn-answers-dropped"]


def test_every_recommended_only_mark_names_a_decision_of_the_project() -> None:
    from fakepeer.cases import repository_root

    decisions = (repository_root() / "docs" / "decisions.md").read_text(encoding="utf-8")
    from tests.mutants.node_mutants import NODE_RECOMMENDED_ONLY

    marked = {m.name: m.recommended_only for m in MUTANTS.values() if m.recommended_only}
    marked |= NODE_RECOMMENDED_ONLY  # a Node entry {"fault", "recommended_only"}
    assert marked, "no mutant is marked recommended_only"
    missing = {name: d for name, d in marked.items() if f"## {d}\n" not in decisions}
    assert not missing, f"recommended_only names no decision of docs/decisions.md: {missing}"
