"""`--version`, the corpus line of `run` and its reports, `changes --since` and `run --since`
(CHANGELOG.md; docs/fixtures.md "Corpus versions")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fakepeer import __version__
from fakepeer.authoring.changes import fixtures_since
from fakepeer.cases.corpus_version import corpus_version
from fakepeer.protocol.version import PROTOCOL_VERSION
from tests.support.helpers import REPO, run_cli


def test_version_prints_package_corpus_and_protocol() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"ryusen-conform {__version__}"
    assert re.fullmatch(
        r"corpus \d+\.\d+(\+dev)? \(\d+ fixtures.*; sha256:[0-9a-f]{16}\)", lines[1]
    )
    assert lines[2] == f"protocol {PROTOCOL_VERSION}"


def test_package_version_is_semver_and_pyproject_agrees() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{__version__}"' in text
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", __version__)


def test_run_prints_the_corpus_and_every_report_carries_it(tmp_path: Path) -> None:
    report, md, xml = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.xml"
    result = run_cli(
        "run", "-k", "values.str-leading-nul-roundtrip", "--report-json", str(report),
        "--markdown", str(md), "--junit", str(xml),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    version = corpus_version(REPO / "fixtures")
    assert f"{version.describe()}, protocol {PROTOCOL_VERSION}" in result.stdout
    document = json.loads(report.read_text())
    assert document["corpus"] == version.to_json()
    assert f"corpus {version.version}" in md.read_text()
    assert f'name="corpus" value="{version.version}"' in xml.read_text()


def test_changes_since_names_what_changed_after_a_release() -> None:
    result = run_cli("changes", "--since", "2.1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Unreleased")
    assert "0.4.0 — corpus 3.0, protocol 1.0 (2026-12-01)" in result.stdout
    assert "0.3.0 — corpus 2.1" not in result.stdout
    assert "values.str-leading-nul-roundtrip" in result.stdout
    assert re.search(
        r"\d+ fixture\(s\) added, \d+ changed, \d+ removed in \d+ release", result.stdout
    )


def test_changes_since_an_unknown_release_is_one_line() -> None:
    result = run_cli("changes", "--since", "7.7")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "ryusen-conform: error: no release '7.7' in CHANGELOG.md; the releases are: 0.4.0"
        )
    )
    assert "Traceback" not in result.stderr


def test_run_since_runs_only_fixtures_added_or_changed_after_it(tmp_path: Path) -> None:
    result = run_cli("run", "--since", "2.1", "--list")
    assert result.returncode == 0, result.stderr
    listed = set(re.findall(r"^\s*(\S+\.\S+)", result.stdout, re.MULTILINE))
    assert "values.str-leading-nul-roundtrip" in result.stdout
    # Exactly the fixtures the changelog names since 2.1 that still exist are listed; the
    # corpus keeps others (an unchanged fixture is left out, whichever it is today).
    touched, _removed = fixtures_since("2.1")
    loaded = {path.stem for path in (REPO / "fixtures").rglob("*.json")}
    unchanged = sorted(loaded - touched)
    assert unchanged, "every fixture changed since 2.1: pick an older release"
    assert unchanged[0] not in listed
    assert re.search(r"--since 2\.1: \d+ fixture\(s\) added or changed since", result.stdout)
    assert listed
    bad = run_cli("run", "--since", "nope")
    assert bad.returncode == 2 and "--since: no release 'nope'" in bad.stderr
