"""`ryusen-conform run --sdk A --sdk B` end to end with the table host as both SDKs (subprocesses).

SDK B is the same host offering fewer capabilities, so the timers case is skipped there only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.helpers import TABLE_HOST, echo_scenario
from tests.support.helpers import run_cli as conform
from tests.support.html_check import check_html

REPO = Path(__file__).resolve().parents[2]
SDK_A = f"{sys.executable} {TABLE_HOST}"
SDK_B = f"/usr/bin/env TABLE_HOST_CAPABILITIES=compensation {sys.executable} {TABLE_HOST}"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    echo_scenario("ok").write(root)
    echo_scenario("wrong-value", category="values").write(root)
    echo_scenario("caps", category="timers", capabilities=("timers",)).write(root)
    return root


def two_sdk_args(corpus: Path) -> list[str]:
    return [
        "--sdk",
        SDK_A,
        "--sdk",
        SDK_B,
        "--no-default-fixtures",
        "--fixtures",
        str(corpus),
        "--timeout",
        "5",
    ]


def test_two_sdks_print_the_tally_and_write_every_report(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = conform(
        "run",
        *two_sdk_args(corpus),
        "--report-json",
        str(out / "r.json"),
        "--junit",
        str(out / "r.xml"),
        "--markdown",
        str(out / "r.md"),
        "--html",
        str(out / "r.html"),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.rstrip("\n").splitlines()
    assert lines[-1] == "3 passed, 2 failed, 1 skipped"
    table = result.stdout[result.stdout.index("categories x SDKs") :]
    assert "wrote the HTML report to" in table
    timers = next(line for line in table.splitlines() if line.startswith("timers"))
    assert "1/1" in timers and "0/1 1 skip" in timers
    document = json.loads((out / "r.json").read_text())
    assert document["matrix"]["sdks"] == [SDK_A, SDK_B]
    page = check_html((out / "r.html").read_text(encoding="utf-8"))
    assert page.problems == [] and len(page.details) == 6
    assert "| timers |" in (out / "r.md").read_text()
    assert (out / "r.xml").read_text().count("<testsuite ") == 2


def test_merge_of_two_sdk_shards_matches_the_whole_run(corpus: Path, tmp_path: Path) -> None:
    shards = []
    for shard in ("1/2", "2/2"):
        path = tmp_path / f"shard-{shard[0]}.json"
        result = conform("run", *two_sdk_args(corpus), "--shard", shard, "--report-json", str(path))
        assert result.returncode in (0, 1), result.stdout + result.stderr
        shards.append(str(path))
    html = tmp_path / "merged.html"
    merged = conform("merge", *shards, "--out", str(tmp_path / "merged.json"), "--html", str(html))
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert merged.stdout.rstrip("\n").splitlines()[-1] == "3 passed, 2 failed, 1 skipped"
    assert "categories x SDKs" in merged.stdout
    document = json.loads((tmp_path / "merged.json").read_text())
    assert document["matrix"]["sdks"] == [SDK_A, SDK_B]
    assert [total["total"] for total in document["matrix"]["totals"]] == [3, 3]
    text = html.read_text(encoding="utf-8")
    assert check_html(text).problems == [] and "table host run caps" in text


def test_the_fuzz_command_is_mounted() -> None:
    result = conform("fuzz", "--help")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--examples" in result.stdout and "--seed" in result.stdout


def test_run_and_merge_offer_html() -> None:
    for command in ("run", "merge"):
        result = conform(command, "--help")
        assert result.returncode == 0 and "--html" in result.stdout, result.stdout


def test_without_a_terminal_progress_lines_come_at_a_steady_rate(tmp_path: Path) -> None:
    """Issue 22 (7): a run piped to a file shows progress, even while a case hangs."""
    root = tmp_path / "fixtures"
    for run_id in ("hang", "ok"):
        echo_scenario(run_id).write(root)
    result = conform(
        *("run", "--sdk", SDK_A, "--no-default-fixtures", "--fixtures", str(root)),
        *("--timeout", "2"),
        env=dict(os.environ, RYUSEN_CONFORM_PROGRESS="0.3"),
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("progress: ")]
    assert len(lines) >= 3, result.stderr
    assert "0/2 cases" in lines[0] and "failing" in lines[0]


def test_long_sdk_labels_stay_distinct_in_the_tally(tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    echo_scenario("ok").write(root)
    deep = tmp_path / ("a-very-long-folder-name-" * 3) / "repo" / "runners"
    deep.mkdir(parents=True)
    host = [sys.executable, str(TABLE_HOST)]
    first, second = deep / "one", deep / "two"
    for path in (first, second):
        path.write_text(f"#!/bin/sh\nexec {' '.join(host)}\n")
        path.chmod(0o755)
    result = conform(
        *("run", "--sdk", str(first), "--sdk", str(second)),
        *("--no-default-fixtures", "--fixtures", str(root)),
        env=dict(os.environ, COLUMNS="80"),
    )
    assert f"SDK 1: {first}" in result.stdout and f"SDK 2: {second}" in result.stdout
