"""A self-contained distribution (issue 11.1): build the wheel and the sdist, install the wheel
alone into a fresh venv, and use it from a folder outside any checkout.

Slow by nature (a build and a venv: about a minute), so it runs once per suite; pip's cache
makes the dependency downloads cheap after the first run. PyPI must be reachable. Both builds
read a private copy of the checkout (a build writes `build/` and `*.egg-info` where it builds,
which would race the tests beside it under `pytest -n auto`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.checkout import copy_checkout

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`argv` in `cwd`, without PYTHONPATH: a checkout on it (and a `*.egg-info` a build left
    there) would make the fresh venv's pip take the package as installed already."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout the builds read (and write their build folders into)."""
    return copy_checkout(tmp_path_factory.mktemp("source") / "ryusen-conform")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, source: Path) -> tuple[Path, Path, Path]:
    """(the built wheel, the fresh venv's bin folder, an empty folder outside the checkout)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)], base
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = dist.glob("ryusen_conform-*.whl")
    venv = base / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], base).returncode == 0
    bin_dir = venv / "bin"
    pip = _run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)], base)
    assert pip.returncode == 0, pip.stderr[-2000:]
    outside = base / "outside"
    outside.mkdir()
    return wheel, bin_dir, outside


def test_the_wheel_carries_the_corpus(installed: tuple[Path, Path, Path]) -> None:
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    bundle = "fakepeer/_bundle/"
    fixtures = [n for n in names if n.startswith(bundle + "fixtures/") and n.endswith(".json")]
    assert len(fixtures) == len(list((ROOT / "fixtures").rglob("*.json")))
    for needed in (
        "matrix.json",
        "docs/protocol.md",
        "docs/fixtures.md",
        "docs/rfd-2-execution-protocol.txt",
        "runners/python/host.py",
        "runners/python/pyproject.toml",
    ):
        assert bundle + needed in names, needed
    assert "fakepeer/protocol/schemas/invoke.schema.json" in names
    assert not [n for n in names if n.startswith(bundle) and "__pycache__" in n]


def test_commands_work_outside_the_checkout(installed: tuple[Path, Path, Path]) -> None:
    _, bin_dir, outside = installed
    bench = str(bin_dir / "ryusen-conform")
    documents = [json.loads(p.read_text("utf-8")) for p in (ROOT / "fixtures").rglob("*.json")]
    corpus = len(documents)
    # the fixtures of the HTTP mapping (capability `http`) are skipped by a host on stdio
    http_only = sum("http" in document.get("capabilities", []) for document in documents)

    run = _run([bench, "run"], outside)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stderr.splitlines()[0].endswith("(bundled with the installed package, read-only)")
    skipped = f", {http_only} skipped" if http_only else ""
    assert run.stdout.strip().splitlines()[-1] == f"{corpus - http_only} passed, 0 failed{skipped}"

    shutil.copytree(
        ROOT / "runners" / "python", outside / "host", ignore=shutil.ignore_patterns("__pycache__")
    )
    relative = _run([bench, "run", "--sdk", "host/conform", "-k", "values."], outside)
    assert relative.returncode == 0, relative.stdout[-2000:]
    absolute = _run(
        [bench, "run", "--sdk", str(outside / "host" / "conform"), "-k", "timers"], outside
    )
    assert absolute.returncode == 0, absolute.stdout[-2000:]

    validate = _run([bench, "fixtures", "validate"], outside)
    assert validate.returncode == 0 and f"{corpus} fixture file(s) valid" in validate.stdout
    coverage = _run([bench, "coverage", "--json"], outside)
    assert coverage.returncode == 0, coverage.stderr
    assert json.loads(coverage.stdout)
    schema = _run([bench, "schema", "--out", "schemas"], outside)
    assert schema.returncode == 0 and (outside / "schemas" / "invoke.schema.json").is_file()
    assert _run([bench, "matrix", "--check"], outside).returncode == 0

    refused = _run([bench, "matrix"], outside)
    assert refused.returncode == 2 and "read-only" in refused.stderr
    new = _run([bench, "fixtures", "new", "timers.mine", "--category", "timers"], outside)
    assert new.returncode == 0, new.stderr
    assert (outside / "fixtures" / "timers" / "timers.mine.json").is_file()
    site = _run(
        [str(bin_dir / "python"), "-c", "import fakepeer; print(fakepeer.__file__)"], outside
    )
    package = Path(site.stdout.strip()).parent
    into = _run(
        [bench, "fixtures", "new", "timers.x", "-c", "timers", "--dir", str(package)], outside
    )
    assert into.returncode == 2 and "installed package" in into.stderr
    assert not list(package.rglob("timers.x.json")) and not list(package.rglob("timers.mine.json"))


def test_the_python_reference_sdk_installs_on_its_own(installed: tuple[Path, Path, Path]) -> None:
    _, bin_dir, outside = installed
    pip = _run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(ROOT / "runners" / "python")],
        outside,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    host = str(bin_dir / "ryusen-python-conform")
    run = _run(
        [str(bin_dir / "ryusen-conform"), "run", "--sdk", host, "-k", "registration"], outside
    )
    assert run.returncode == 0, run.stdout[-2000:]


def test_the_sdist_carries_what_the_wheel_is_built_from(tmp_path: Path, source: Path) -> None:
    built = _run(
        [sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(source)], tmp_path
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (sdist,) = tmp_path.glob("ryusen_conform-*.tar.gz")
    names = tarfile.open(sdist).getnames()
    for needed in (
        "setup.py",
        "matrix.json",
        "action.yml",
        "docs/protocol.md",
        "runners/python/host.py",
    ):
        assert any(name.endswith("/" + needed) for name in names), needed
    assert sum(name.endswith(".json") and "/fixtures/" in name for name in names) == len(
        list((ROOT / "fixtures").rglob("*.json"))
    )
