"""The edit-run loop (issue 22, item 6): checked fixtures cached by content, only the selected
files read, --maxfail/-x, --last-failed, --ids-from, and failures with one cause rolled up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakepeer.cases import cache, load_fixtures
from fakepeer.cases import loader as loader_module
from tests.cli.test_cli import last_line, sdk_args
from tests.support.helpers import echo_scenario
from tests.support.helpers import run_cli as conform


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    for run_id in ("ok", "echo", "wrong-value", "crash"):
        echo_scenario(run_id).write(root)
    return root


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV, str(home))
    return home


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    checked: list[Path] = []
    real = loader_module.load_fixture_file

    def counting(file: Path, data: bytes | None = None):
        checked.append(file)
        return real(file, data)

    monkeypatch.setattr(loader_module, "load_fixture_file", counting)
    return checked


def test_a_second_load_checks_nothing_and_an_edit_checks_that_file(
    small_corpus: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = _count_checks(monkeypatch)
    first = load_fixtures([small_corpus])
    assert len(checked) == 4
    checked.clear()
    again = load_fixtures([small_corpus])
    assert checked == [] and [f.id for f in again] == [f.id for f in first]
    assert again[0].steps == first[0].steps
    edited = small_corpus / "discovery" / "t.ok.json"
    document = json.loads(edited.read_text())
    document["title"] = "an edited title"
    edited.write_text(json.dumps(document))
    reloaded = load_fixtures([small_corpus])
    assert checked == [edited]
    assert next(f for f in reloaded if f.id == "t.ok").title == "an edited title"


def test_a_corrupt_or_foreign_entry_is_a_miss_never_a_result(
    small_corpus: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_fixtures([small_corpus])
    entries = [p for p in cache_home.rglob("*") if p.is_file()]
    assert len(entries) == 4
    entries[0].write_bytes(b"garbage")
    entries[1].write_bytes(entries[1].read_bytes()[:100])  # cut short
    checked = _count_checks(monkeypatch)
    fixtures = load_fixtures([small_corpus])
    assert len(checked) == 2 and len(fixtures) == 4


def test_a_broken_fixture_is_reported_every_time(small_corpus: Path, cache_home: Path) -> None:
    broken = small_corpus / "discovery" / "t.ok.json"
    broken.write_text('{"id": "t.ok"}')
    for _ in range(2):
        result = conform("run", *sdk_args(small_corpus))
        assert result.returncode == 2 and "t.ok.json" in result.stderr


def test_k_reads_only_the_selected_files(small_corpus: Path, cache_home: Path) -> None:
    (small_corpus / "discovery" / "t.crash.json").write_text("{ not json")
    one = conform("run", *sdk_args(small_corpus), "-k", "t.ok")
    assert one.returncode == 0, one.stdout + one.stderr
    assert last_line(one.stdout) == "1 passed, 0 failed"
    whole = conform("run", *sdk_args(small_corpus))
    assert whole.returncode == 2 and "t.crash.json" in whole.stderr


def test_maxfail_stops_and_reports_the_rest_not_run_in_one_line(
    small_corpus: Path, cache_home: Path
) -> None:
    result = conform("run", *sdk_args(small_corpus), "-x")
    assert result.returncode == 1
    # t.crash fails first (sorted ids): the three after it are not run, rolled up in one line
    assert "3 case(s) not run: --maxfail 1 reached" in result.stdout
    assert result.stdout.count("not run") == 1  # one line, not a grouped example per case
    assert "--maxfail takes" in conform("run", *sdk_args(small_corpus), "--maxfail", "0").stderr


def test_maxfail_does_not_count_known_failures(
    small_corpus: Path, cache_home: Path, tmp_path: Path
) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("t.crash\n")
    result = conform("run", *sdk_args(small_corpus), "-x", "--known-failures", str(listed))
    assert "not run" not in result.stdout
    assert last_line(result.stdout) == "2 passed, 1 failed, 1 xfailed"


def test_last_failed_reruns_exactly_what_failed(small_corpus: Path, cache_home: Path) -> None:
    first = conform("run", *sdk_args(small_corpus))
    assert first.returncode == 1
    rerun = conform("run", *sdk_args(small_corpus), "--last-failed", "--list")
    assert [line.split("\t")[0] for line in rerun.stdout.splitlines()] == [
        "t.crash",
        "t.wrong-value",
    ]
    narrower = conform("run", *sdk_args(small_corpus), "-k", "t.ok")
    assert narrower.returncode == 0
    still = conform("run", *sdk_args(small_corpus), "--lf", "--list")
    assert len(still.stdout.splitlines()) == 2, "a narrower run keeps the failures it did not run"


def test_last_failed_with_nothing_recorded_runs_the_selection(
    small_corpus: Path, cache_home: Path
) -> None:
    result = conform("run", *sdk_args(small_corpus), "--last-failed", "--list")
    assert "no failures recorded" in result.stdout
    assert len(result.stdout.splitlines()) == 5


def test_ids_from_runs_the_listed_ids_and_refuses_unknown_ones(
    small_corpus: Path, cache_home: Path, tmp_path: Path
) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("# the two I am working on\nt.ok\nt.echo  # new\n")
    result = conform("run", *sdk_args(small_corpus), "--ids-from", str(ids))
    assert result.returncode == 0, result.stdout + result.stderr
    assert last_line(result.stdout) == "2 passed, 0 failed"
    ids.write_text("t.ok\nt.typo\n")
    bad = conform("run", *sdk_args(small_corpus), "--ids-from", str(ids))
    assert bad.returncode == 2 and "t.typo is no fixture" in bad.stderr


def test_one_cause_is_one_paragraph_in_the_console_and_the_markdown(
    small_corpus: Path, cache_home: Path, tmp_path: Path
) -> None:
    for n in range(8):
        echo_scenario(f"more-{n}").write(small_corpus)
    summary = tmp_path / "summary.md"
    result = conform(
        *("run", "--sdk", "false", "--no-default-fixtures", "--fixtures", str(small_corpus)),
        *("--markdown", str(summary)),
    )
    assert result.returncode == 1
    assert "registration handshake failed" in result.stdout
    # the first two cases may each word it their own way; the rest are one group
    assert result.stdout.count("registration handshake failed") <= 5
    assert "cases: error: registration handshake failed" in result.stdout
    assert "the same for:" in result.stdout
    text = summary.read_text()
    assert text.count("<details>") <= 3 and "The same for:" in text


_HEAVY = ("hypothesis", "jsonschema", "http.client", "fakepeer.server.loop")
_PROBE = """
import sys
from fakepeer import cli
sys.argv = ["ryusen-conform", *sys.argv[1:]]
try:
    cli.main()
except SystemExit:
    pass
print("HEAVY:" + ",".join(m for m in %r if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["run", "--list"], ["run", "-k", "values.bytes-empty"]])
def test_the_fast_loop_imports_no_fuzzer_schema_checker_or_http(
    args: list[str], cache_home: Path
) -> None:
    """Issue 22 (6): `run -k ONE` and `run --list` with a warm cache import neither hypothesis
    (the fuzz command's, ~0.4 s), nor jsonschema (a cache miss and a wrong frame need it), nor
    the HTTP transport, nor the model server: each costs a tenth of a second or more."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, **{cache.ENV: str(cache_home)})
    probe = [sys.executable, "-c", _PROBE % (_HEAVY,), *args]
    subprocess.run(probe, env=env, capture_output=True, check=False)  # fills the cache
    warm = subprocess.run(probe, env=env, capture_output=True, text=True, check=False)
    heavy = [line for line in warm.stderr.splitlines() if line.startswith("HEAVY:")]
    assert heavy == ["HEAVY:"], warm.stderr[-2000:]
