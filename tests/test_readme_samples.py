"""The README stays true by test (issue 11.7): its sample output's numbers come from real runs
of the current corpus, and every command in a fenced `sh` block runs and succeeds.

Generic on purpose (other README sections come and go): every ```sh block of README.md is run
from the repository root, except the test command itself (this suite is what it runs; .ci/run
runs it and tests/test_readme.py ties the two together). Each runs in a private copy of the
checkout with a venv of its own (on top of this Python's packages): the set-up command's
`pip install -e .` and `npm ci` would otherwise re-point this environment's install and delete
`runners/node/node_modules` under the Node tests running beside it (`pytest -n auto`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fakepeer.cases import default_fixture_dir, load_fixtures
from tests.support.checkout import copy_checkout

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND_END = "python3 -m pytest -n auto"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)\n```", README, flags=re.S)


def _commands() -> list[str]:
    readme_only = README.split("<!-- embed:protocol:begin -->", 1)[0]  # not the embedded docs
    found = re.findall(r"```sh\n(.*?)\n```", readme_only, flags=re.S)
    return [c for c in found if not c.strip().endswith(TEST_COMMAND_END)]


def _shell(
    command: str, timeout: float = 900, root: Path = ROOT, bin_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`command` run by bash in `root`, `bin_dir` (default: this Python's) first on PATH."""
    found = str(bin_dir or Path(sys.executable).parent)
    env = dict(os.environ, PATH=found + os.pathsep + os.environ.get("PATH", ""))
    if bin_dir is not None:  # a venv of its own: it imports what it installed, not this checkout
        env.pop("PYTHONPATH", None)
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _sample(marker: str) -> list[str]:
    """The lines of the first ```text block after `marker`."""
    after = README.split(marker, 1)[1]
    return re.search(r"```text\n(.*?)\n```", after, flags=re.S).group(1).splitlines()


def test_green_sample_totals_are_the_corpus() -> None:
    """Every fixture is counted once: passed, or skipped because it needs the HTTP mapping
    (capability `http`, docs/protocol.md §1.1), which the bundled host does not serve on stdio."""
    fixtures = load_fixtures([default_fixture_dir()])
    per_category: dict[str, tuple[int, int]] = {}
    for fixture in fixtures:
        passed, skipped = per_category.get(fixture.category, (0, 0))
        if "http" in fixture.capabilities:
            skipped += 1
        else:
            passed += 1
        per_category[fixture.category] = (passed, skipped)
    lines = _sample("A green run of the bundled reference SDK")
    rows = {}
    for line in lines:
        cells = [cell.strip() for cell in re.split(r"[│┃]", line)]
        if len(cells) == 7 and cells[1].isdigit():
            rows[cells[0]] = (int(cells[1]), int(cells[4]))
    passed, skipped = rows.pop("total")
    assert passed + skipped == len(fixtures), "README sample total != the corpus; update it"
    assert skipped == sum(s for _, s in per_category.values()), "README sample skips"
    for category, count in rows.items():
        assert per_category.get(category) == count, f"README sample row {category}: {count}"
    tail = f", {skipped} skipped" if skipped else ""
    assert lines[-1] == f"{passed} passed, 0 failed{tail}"


def test_failing_sample_totals_come_from_its_command() -> None:
    before = README.split("And what a broken SDK looks like", 1)[1].split("```text", 1)[0]
    command = re.search(r"\(`(ryusen-conform run [^`]+)`\)", " ".join(before.split())).group(1)
    lines = _sample("And what a broken SDK looks like")
    done = _shell(command)
    assert done.returncode == 1, done.stdout[-2000:]
    assert done.stdout.strip().splitlines()[-1] == lines[-1], f"README sample of `{command}`"
    shown = done.stdout.splitlines()
    for line in lines[:-1]:
        assert not line or line in shown, f"README sample line not in the real output: {line}"


def test_readme_has_commands_to_run() -> None:
    assert _commands(), "README.md has no ```sh command besides the test command"


@pytest.mark.parametrize("command", _commands())
def test_every_readme_command_runs(command: str, tmp_path: Path) -> None:
    root = copy_checkout(tmp_path / "checkout")
    modules = ROOT / "runners/node/node_modules"
    if "npm " not in command and modules.is_dir():  # the Node SDK's dependencies, as set up
        (root / "runners/node/node_modules").symlink_to(modules)  # never installed through
    venv = tmp_path / "venv"  # pip comes from this Python's packages; installs go to the venv
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    done = _shell(command, root=root, bin_dir=venv / "bin")
    assert done.returncode == 0, (
        f"`{command}` failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
    )
