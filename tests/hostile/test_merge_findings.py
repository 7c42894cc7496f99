"""Issue 36, wrong greens of `merge`: shards of two corpora merged green, and a partial merge
exited 1 while every report it wrote said green (exit status 0, no failure, missing cases not
recorded). Each test is the command line a user types."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.hostile.bench_run import shard_reports, write_fixtures
from tests.support.helpers import run_cli as cli

CASES = tuple(f"hostile.case-{n:02d}" for n in range(1, 5))
CORPUS = {
    "version": "3.0+dev",
    "release": "3.0",
    "fingerprint": "sha256:" + "a" * 64,
    "fixtures": 4,
}


def _output(done: subprocess.CompletedProcess) -> str:
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Both shard reports of a passing run, recorded as run on CORPUS."""
    tmp = tmp_path_factory.mktemp("merge-findings")
    fixtures = write_fixtures(tmp / "fixtures", CASES)
    reports = shard_reports(fixtures, tmp, "runners/python/conform")
    for report in reports:
        document = json.loads(report.read_text())
        assert document["exit_status"] == 0
        document["corpus"] = CORPUS
        report.write_text(json.dumps(document))
    return reports


def _with_corpus(source: Path, target: Path, **changes: object) -> Path:
    document = json.loads(source.read_text())
    document["corpus"] = None if changes.get("none") else {**CORPUS, **changes}
    target.write_text(json.dumps(document))
    return target


def test_shards_of_one_corpus_merge_green(shards: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    done = cli("merge", *map(str, shards), "--out", str(out))
    assert done.returncode == 0, _output(done)
    assert json.loads(out.read_text())["corpus"] == CORPUS


@pytest.mark.parametrize(
    "change",
    [
        {"fingerprint": "sha256:" + "b" * 64},  # the same ids, another content
        {"version": "3.1"},  # an edited version
        {"none": True},  # one shard without the default corpus
    ],
    ids=["fingerprint", "version", "no-corpus"],
)
@pytest.mark.parametrize("extra", [[], ["--allow-mixed"], ["--allow-partial"]])
def test_merge_refuses_shards_of_different_corpora(
    shards: list[Path], change: dict, extra: list[str], tmp_path: Path
) -> None:
    first, second = shards
    other = _with_corpus(second, tmp_path / "other.json", **change)
    done = cli("merge", str(first), str(other), "--out", str(tmp_path / "m.json"), *extra)
    assert done.returncode == 2, _output(done)
    assert "different fixture corpora" in done.stderr and "Traceback" not in _output(done)
    assert not (tmp_path / "m.json").exists()


def test_a_partial_merge_writes_no_green_report(shards: list[Path], tmp_path: Path) -> None:
    first, _ = shards
    held = len(json.loads(first.read_text())["sdks"][0]["cases"])
    missing = len(CASES) - held
    out, junit, markdown = tmp_path / "m.json", tmp_path / "m.xml", tmp_path / "m.md"
    done = cli(
        "merge", str(first), "--allow-partial", "--out", str(out), "--junit", str(junit),
        "--markdown", str(markdown),
    )  # fmt: skip
    assert done.returncode == 1, _output(done)
    assert done.stdout.splitlines()[-1] == f"{held} passed, 0 failed, {missing} errors"
    assert done.stderr.count("not run") == 0 and "in no report" in done.stderr, done.stderr
    document = json.loads(out.read_text())
    assert document["exit_status"] == 1
    assert document["summary"] == {**document["summary"], "pass": held, "error": missing}
    assert document["summary"]["total"] == len(CASES)
    not_run = [case for case in document["sdks"][0]["cases"] if case.get("not_run")]
    assert len(not_run) == missing and all("allow-partial" in c["reason"] for c in not_run)
    text = markdown.read_text()
    assert "exit status 0" not in text and "exit status 1" in text, text
    suite = ET.parse(junit).getroot()
    suites = [suite] if suite.tag == "testsuite" else list(suite)
    failing = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    assert failing == missing, ET.tostring(suite)
