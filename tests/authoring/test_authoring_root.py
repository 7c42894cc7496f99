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
    # from a source tree (editable install, PYTHONPATH): its checkout, which is not read-only;
    # a wheel's bundled copy says read-only (tests/test_wheel.py)
    assert "(the installed package's source checkout, used from outside it;" in first, first
    assert "read-only" not in first
    matrix = _cli("matrix", cwd=outside)
    assert matrix.returncode == 2 and "not in the checkout you stand in" in matrix.stderr
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


def test_outside_a_checkout_own_fixtures_are_never_left_out_silently(tmp_path: Path) -> None:
    """Issue 22 (9): `fixtures new` outside a checkout writes ./fixtures and says how to use it;
    `fixtures validate` and `run` say ./fixtures is not the corpus they read; `run --fixtures`
    refuses the unfilled scaffold; a `fixtures record` draft beside it is not run (a note says
    so) instead of failing the run with a file-name error."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    new = _cli("fixtures", "new", "timers.mine", "--category", "timers", cwd=outside)
    assert new.returncode == 0, new.stderr
    assert "fixtures validate fixtures" in new.stdout and "run --fixtures fixtures" in new.stdout
    validate = _cli("fixtures", "validate", "fixtures/timers/timers.mine.json", cwd=outside)
    assert validate.returncode == 2
    listing = _cli("run", "--list", "-k", "timers.sleep-200ms", cwd=outside)
    assert "./fixtures is not part of this run" in listing.stdout + listing.stderr
    scaffold = _cli("run", "--fixtures", "fixtures", "-k", "timers.mine", cwd=outside)
    assert scaffold.returncode == 2, scaffold.stdout + scaffold.stderr
    assert "still the scaffold's text" in scaffold.stderr
    ready = json.loads((REPO / "fixtures" / "timers" / "timers.sleep-200ms.json").read_text())
    ready["id"] = "timers.mine"
    mine = outside / "fixtures" / "timers" / "timers.mine.json"
    mine.write_text(json.dumps(ready), encoding="utf-8")
    draft = mine.with_name("timers.mine.recorded.json")
    draft.write_text(json.dumps(ready), encoding="utf-8")
    run = _cli("run", "--fixtures", "fixtures", "-k", "timers.mine", cwd=outside)
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert "1 recorded draft(s) not run" in run.stdout
    assert "must be named" not in run.stdout + run.stderr
