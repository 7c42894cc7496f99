"""The pytest plugin (issue 11.4): fixtures as items, with -k, -x, --junitxml and xdist's -n.

Run from a folder outside the checkout, so pytest collects nothing but the fixture items (the
corpus is then the bundled one: this checkout, through the editable install).
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from fakepeer.cases import default_fixture_dir, load_fixtures

BAD = {"failure", "error", "skipped"}
ROOT = Path(__file__).resolve().parent.parent
MUTANT = f"{sys.executable} {ROOT / 'tests' / 'mutants' / 'mutant_host.py'} replay-reruns-callback"


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_without_the_option_the_plugin_adds_nothing(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--collect-only")
    assert "ryusen-conform" not in result.stdout
    assert result.returncode == 5, result.stdout  # no tests collected


def _http(case: ElementTree.Element) -> bool:
    """A fixture of the HTTP mapping (capability `http`): skipped over stdio by design."""
    http_only = {f.id for f in load_fixtures([default_fixture_dir()]) if "http" in f.capabilities}
    return case.get("name") in http_only


def test_every_fixture_is_an_item_and_passes_over_two_xdist_workers(tmp_path: Path) -> None:
    corpus = len(load_fixtures([default_fixture_dir()]))
    junit = tmp_path / "junit.xml"
    sdk = str(ROOT / "runners" / "python" / "conform")
    result = _pytest(tmp_path, "--ryusen-sdk", sdk, "-n", "2", f"--junitxml={junit}")
    assert result.returncode == 0, result.stdout[-3000:]
    cases = list(ElementTree.parse(junit).getroot().iter("testcase"))
    names = sorted(case.get("name") for case in cases)
    assert len(names) == corpus
    # the `http` fixtures need the HTTP transport (docs/protocol.md §1.1): skipped over stdio
    bad = [
        c.get("name")
        for c in cases
        if any(e.tag in BAD and not (e.tag == "skipped" and _http(c)) for e in c)
    ]
    assert bad == [], "every item passed (no failure, error or skip but the http ones)"
    assert names == sorted(fixture.id for fixture in load_fixtures([default_fixture_dir()]))


def test_a_failure_shows_the_cli_diff_and_k_x_select(tmp_path: Path) -> None:
    # three fixtures match; -x stops at the first failure
    plugin = _pytest(tmp_path, "--ryusen-sdk", MUTANT, "-k", "replay and not-rerun", "-x")
    assert plugin.returncode == 1
    assert re.search(r"1 failed, \d+ deselected", plugin.stdout), plugin.stdout[-800:]
    reported = re.search(r"^FAIL (\S+) ", plugin.stdout, re.M)
    assert reported, plugin.stdout[-1500:]
    cli = subprocess.run(
        [sys.executable, "-m", "fakepeer", "run", "--sdk", MUTANT, "-k", reported.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    failure = [line for line in cli.stdout.splitlines() if line.startswith("FAIL ")]
    assert failure, cli.stdout
    start = cli.stdout.splitlines().index(failure[0])
    block = cli.stdout.splitlines()[start : start + 3]
    for line in block:
        assert line in plugin.stdout, (line, plugin.stdout[-1500:])


def test_in_this_checkout_the_option_collects_the_fixtures_alone() -> None:
    """`pytest --ryusen-sdk CMD` from the repository root (issue 11's command) collects the
    fixtures, not this repository's own tests (tests/conftest.py); named paths add tests."""
    sdk = str(ROOT / "runners" / "python" / "conform")
    corpus = len(load_fixtures([default_fixture_dir()]))
    result = _pytest(ROOT, "--ryusen-sdk", sdk, "--collect-only")  # -q twice: counts per file
    counts = [line for line in result.stdout.splitlines() if line.strip()]
    assert counts == [f"ryusen-conform: {corpus}"], result.stdout[-2000:]
    named = _pytest(ROOT, "--ryusen-sdk", sdk, "--collect-only", "tests/cli/test_atomic_writes.py")
    assert "tests/cli/test_atomic_writes.py: 3" in named.stdout.splitlines(), named.stdout


# ----------------------------------------------------------------------------- issue 22 (3, 11)


def test_an_sdk_that_cannot_start_is_one_usage_error_exit_4(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--ryusen-sdk", "./nonexistent", "-k", "values.bytes-empty")
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    output = result.stdout + result.stderr
    assert output.count("--ryusen-sdk ./nonexistent") == 1
    assert "Traceback" not in output and "UsageError" not in output


def test_q_prints_the_summary_and_the_rootdir_is_the_invoking_projects(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    sdk = str(ROOT / "runners" / "python" / "conform")  # beside this checkout's `addopts = -q`
    quiet = _pytest(project, "--ryusen-sdk", sdk, "-k", "values.bytes-empty")
    assert re.search(r"^1 passed, \d+ deselected", quiet.stdout, re.M), quiet.stdout[-800:]
    verbose = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--ryusen-sdk", sdk]
        + ["-k", "values.bytes-empty"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert f"rootdir: {project}" in verbose.stdout, verbose.stdout[:800]
    assert re.search(r"collected \d+ items / \d+ deselected / 1 selected", verbose.stdout)
    assert "-" not in re.search(r"collected[^\n]*", verbose.stdout).group(0).split("/")[-1]


def test_known_failures_and_variants_options(tmp_path: Path) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("replay.callback-not-rerun\nvalues.does-not-exist\n", encoding="utf-8")
    result = _pytest(
        tmp_path,
        *("--ryusen-sdk", MUTANT, "-k", "callback-not-rerun or known-failures"),
        *("--ryusen-known-failures", str(listed)),
    )
    assert result.returncode == 1
    assert re.search(r"1 failed, \d+ deselected, 1 xfailed", result.stdout), result.stdout[-800:]
    assert "lists values.does-not-exist, which is not a loaded fixture" in result.stdout
    bad = _pytest(tmp_path, "--ryusen-sdk", MUTANT, "--ryusen-variants", "all,bogus")
    assert bad.returncode == 4 and "--ryusen-variants" in bad.stdout + bad.stderr


def test_a_difference_in_a_recommended_part_is_a_pytest_warning_and_strict_fails_it(
    tmp_path: Path,
) -> None:
    """Issue 33: an SDK that files a malformed value under another `protocol.*` category passes
    (the category is a recommended part), with the CLI's WARNING text as a pytest warning;
    `--ryusen-strict` fails the item."""
    variation = f"{sys.executable} {ROOT / 'tests' / 'mutants' / 'mutant_host.py'}"
    sdk = f"{variation} variation.refusal-category"
    lax = _pytest(tmp_path, "--ryusen-sdk", sdk, "-k", "values.unknown-tag-refused")
    assert lax.returncode == 0, lax.stdout[-1500:]
    assert re.search(r"1 passed, \d+ deselected, 1 warning", lax.stdout), lax.stdout[-800:]
    assert "recommended (D-DECODE-ORDER)] /body/error/category" in lax.stdout
    strict = _pytest(
        tmp_path, "--ryusen-sdk", sdk, "-k", "values.unknown-tag-refused", "--ryusen-strict"
    )
    assert strict.returncode == 1, strict.stdout[-1500:]
    assert "WARNING values.unknown-tag-refused" in strict.stdout
