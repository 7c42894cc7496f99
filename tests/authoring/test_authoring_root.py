"""Root discovery (issue 14.1): the checkout you stand in, `--root`, else the bundled corpus.

A second clone is a throw-away folder with docs/ and one category of fixtures; every command
run inside it must report and use it, and outside any checkout nothing is written into the
installed package.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakepeer.cases.root import RootError, discover, find_checkout, refuse_installed
from tests.support.helpers import run_cli as _cli

REPO = Path(__file__).resolve().parents[2]


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "docs", clone / "docs")
    shutil.copytree(REPO / "fixtures" / "timers", clone / "fixtures" / "timers")
    return clone


def test_checkout_is_found_from_a_subfolder(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    assert find_checkout(clone / "fixtures" / "timers") == clone.resolve()
    assert find_checkout(tmp_path) is None
    assert discover(cwd=clone / "docs").path == clone.resolve()


def test_every_command_inside_a_second_clone_reports_and_uses_it(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    count = len(list((clone / "fixtures").rglob("*.json")))
    inside = clone / "fixtures"
    validate = _cli("fixtures", "validate", cwd=inside)
    assert validate.returncode == 0, validate.stderr
    assert validate.stderr.splitlines()[0] == f"root: {clone.resolve()}"
    assert f"{count} fixture file(s) valid" in validate.stdout
    listing = _cli("run", "--list", cwd=inside)
    assert listing.stderr.splitlines()[0] == f"root: {clone.resolve()}"
    assert listing.stdout.count("timers.") == count
    matrix = _cli("matrix", cwd=inside)
    assert matrix.returncode == 0, matrix.stderr
    assert json.loads((clone / "matrix.json").read_text())["count"] == count
    assert _cli("matrix", "--check", cwd=inside).returncode == 0
    new = _cli("fixtures", "new", "timers.brand-new", "--category", "timers", cwd=inside)
    assert new.returncode == 0, new.stderr
    assert (clone / "fixtures" / "timers" / "timers.brand-new.json").is_file()
    assert not (REPO / "fixtures" / "timers" / "timers.brand-new.json").exists()


def test_explicit_root_wins_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    chosen = _cli("--root", str(clone), "fixtures", "validate", cwd=REPO)
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stderr.splitlines()[0] == f"root: {clone.resolve()} (--root)"
    bad = _cli("--root", str(tmp_path), "fixtures", "validate", cwd=REPO)
    assert bad.returncode == 2
    assert "not a checkout" in bad.stderr and "Traceback" not in bad.stderr


def test_outside_a_checkout_the_bundled_corpus_is_read_only(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    listing = _cli("run", "--list", cwd=outside)
    assert listing.returncode == 0, listing.stderr
    first = listing.stderr.splitlines()[0]
    assert first.endswith("(bundled with the installed package, read-only)")
    matrix = _cli("matrix", cwd=outside)
    assert matrix.returncode == 2 and "read-only" in matrix.stderr
    assert _cli("matrix", "--check", cwd=outside).returncode == 0
    new = _cli("fixtures", "new", "timers.here", "--category", "timers", cwd=outside)
    assert new.returncode == 0, new.stderr
    assert (outside / "fixtures" / "timers" / "timers.here.json").is_file()


def test_writes_into_an_installed_package_are_refused() -> None:
    import fakepeer

    package = Path(fakepeer.__file__).resolve().parent
    with pytest.raises(RootError, match="installed package"):
        refuse_installed(package / "fixtures" / "x.json", "the new fixture")
    import sysconfig

    with pytest.raises(RootError, match="installed package"):
        refuse_installed(Path(sysconfig.get_paths()["purelib"]) / "x", "the matrix")
