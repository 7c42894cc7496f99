"""scripts/release.py cuts a release on a temporary copy: the heading, the recorded corpus and
the package version move together, and a failed check writes nothing."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from fakepeer.authoring.changelog import read_changelog
from fakepeer.cases.corpus_version import corpus_version
from tests.support.helpers import REPO


def _script():  # noqa: ANN202 - a module object
    spec = importlib.util.spec_from_file_location("release", REPO / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(REPO / "fixtures", root / "fixtures")
    (root / "fakepeer").mkdir()
    shutil.copy(REPO / "fakepeer" / "__init__.py", root / "fakepeer" / "__init__.py")
    for name in ("CHANGELOG.md", "pyproject.toml"):
        shutil.copy(REPO / name, root / name)
    return root


def test_a_release_moves_unreleased_records_the_corpus_and_sets_the_version(tree: Path) -> None:
    release = _script()
    before = read_changelog(tree / "CHANGELOG.md")
    unreleased = len(before[0].changes)
    assert release.main(["9.0.0", "--root", str(tree), "--date", "2030-01-02"]) == 0
    after = read_changelog(tree / "CHANGELOG.md")
    assert after[0].name == "Unreleased" and after[0].changes == []
    assert after[1].name == "9.0.0" and after[1].date == "2030-01-02"
    assert len(after[1].changes) == unreleased
    old_corpus = before[1].corpus
    state = corpus_version(tree / "fixtures")
    assert state.version == after[1].corpus != old_corpus  # the copy is exactly the new release
    assert 'version = "9.0.0"' in (tree / "pyproject.toml").read_text(encoding="utf-8")
    assert '__version__ = "9.0.0"' in (tree / "fakepeer" / "__init__.py").read_text("utf-8")


def test_the_bump_rule() -> None:
    release = _script()
    assert release.next_corpus("3.0", added=True, changed_or_removed=False) == "3.1"
    assert release.next_corpus("3.1", added=True, changed_or_removed=True) == "4.0"
    with pytest.raises(release.ReleaseError, match="exactly corpus 3.0"):
        release.next_corpus("3.0", added=False, changed_or_removed=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0.1.0"], "not newer than the release"),
        (["1.0"], "X.Y.Z"),
        (["9.0.0", "--corpus", "1.0"], "not newer than corpus"),
        (["9.0.0", "--corpus", "x"], "M.N"),
        (["9.0.0", "--date", "tomorrow"], "YYYY-MM-DD"),
    ],
)
def test_a_failed_check_is_one_line_and_writes_nothing(
    tree: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _script()
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    assert release.main([*args, "--root", str(tree)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_an_empty_unreleased_is_refused(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = _script()
    assert release.main(["9.0.0", "--root", str(tree), "--date", "2030-01-02"]) == 0
    assert release.main(["9.1.0", "--root", str(tree)]) == 2
    assert "nothing to release" in capsys.readouterr().err
