"""Issue 10 problems 9 and 10 (and 3, 4, 7): bad input is one line and exit 2, never a traceback;
files are written atomically; merge trusts no input. Each test runs the real command line."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fakepeer.cases.loader import repository_root
from tests.hostile.bench_run import host_command, shard_reports, write_fixtures
from tests.support.helpers import run_cli as cli

ROOT = repository_root()


def assert_one_line_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    for fragment in fragments:
        assert fragment in output, output


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("cli-fixtures"), ("hostile.case-01",))


def _fixture(tmp: Path, fixture_id: str, body_text: str) -> Path:
    """A fixture file whose send body is `body_text` (raw JSON text, spliced in)."""
    folder = tmp / "values"
    folder.mkdir(parents=True, exist_ok=True)
    head = {
        "id": fixture_id, "title": "t", "rule": {"section": "s", "quote": "q"},
        "category": "values", "level": "required", "capabilities": [],
    }  # fmt: skip
    steps = (
        '[{"send": {"kind": "invoke", "body": {"run_id": "run-1", "function_id": "conform.echo", '
        '"mode": "discover", "input": BODY, "history": []}}}, '
        '{"expect": {"kind": "completed", "body": {"value": {"t": "null"}}}}]'
    ).replace("BODY", body_text)
    text = json.dumps(head)[:-1] + ', "steps": ' + steps + "}"
    path = folder / f"{fixture_id}.json"
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- 9


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_an_unclosed_quote_in_sdk_is_one_line(command: str, small: Path) -> None:
    extra = ["--fixtures", str(small), "--no-default-fixtures"] if command == "run" else []
    assert_one_line_error(cli(command, "--sdk", '"unclosed', *extra), "No closing quotation")


@pytest.mark.parametrize("value", ["inf", "1e12", "nan"])
@pytest.mark.parametrize("option", ["--timeout", "--max-time"])
def test_timeouts_that_are_no_deadline_are_refused(option: str, value: str, small: Path) -> None:
    done = cli("run", option, value, "--fixtures", str(small), "--no-default-fixtures")
    assert_one_line_error(done, option)


def test_a_deeply_nested_fixture_is_a_fixture_error(tmp_path: Path) -> None:
    path = _fixture(tmp_path, "values.deep", "[" * 5000 + "]" * 5000)
    done = cli("run", "--fixtures", str(tmp_path), "--no-default-fixtures")
    assert_one_line_error(done, str(path), "nested deeper than")
    assert_one_line_error(cli("fixtures", "validate", str(tmp_path)), "nested deeper than")
    assert_one_line_error(cli("fixtures", "fmt", str(path)), "nested deeper than")


def test_a_huge_repeat_is_a_fixture_error(tmp_path: Path) -> None:
    path = _fixture(tmp_path, "values.repeat", '{"$repeat": {"text": "x", "times": 100000000000}}')
    done = cli("run", "--fixtures", str(tmp_path), "--no-default-fixtures")
    assert_one_line_error(done, str(path), "$repeat makes 100000000000 bytes")


def test_a_number_beyond_a_double_is_a_fixture_error_and_fmt_keeps_it(tmp_path: Path) -> None:
    """Issue 10 problem 4: 1e400 was sent as Infinity, and fmt rewrote it so."""
    path = _fixture(tmp_path, "values.overflow", '{"t": "f64", "x": 1e400}')
    before = path.read_text()
    done = cli("run", "--fixtures", str(tmp_path), "--no-default-fixtures")
    assert_one_line_error(done, str(path), "/steps/0/send/body/input/x", "1e400")
    assert_one_line_error(cli("fixtures", "fmt", str(path)), "1e400")
    assert path.read_text() == before, "fmt must never rewrite 1e400 as Infinity"


def test_a_sent_frame_over_the_frame_limit_is_refused_by_validate(tmp_path: Path) -> None:
    big = '{"$repeat": {"text": "xxxxxxxx", "times": 2100000}}'
    path = _fixture(tmp_path, "values.too-big", big)
    assert_one_line_error(cli("fixtures", "validate", str(tmp_path)), str(path), "16777216")
    done = cli("run", "--fixtures", str(tmp_path), "--no-default-fixtures")
    assert_one_line_error(done, "16777216")


READ_ONLY = Path("/proc/sys")  # read-only even for root in a container (and on most systems)


@pytest.mark.skipif(os.access(READ_ONLY, os.W_OK), reason="no read-only folder at hand")
def test_read_only_paths_are_one_line_errors(small: Path) -> None:
    target = READ_ONLY / "ryusen-conform-test"
    done = cli("run", "--fixtures", str(small), "--no-default-fixtures", "--report-json",
               str(target / "r.json"))  # fmt: skip
    assert_one_line_error(done, str(READ_ONLY))
    done = cli("fixtures", "new", "values.x", "--category", "values", "--dir", str(target))
    assert_one_line_error(done, str(READ_ONLY))
    assert_one_line_error(cli("matrix", "--output", str(target / "m.json")), str(READ_ONLY))
    draft = next(small.rglob("*.json"))
    done = cli(
        "fixtures", "record", "--sdk", "runners/python/conform", "--from", str(draft),
        "--out", str(target / "x.recorded.json"),
    )  # fmt: skip
    assert_one_line_error(done, str(READ_ONLY))


def test_a_file_where_a_folder_is_needed_is_one_line(tmp_path: Path, small: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    done = cli("fixtures", "new", "values.x", "--category", "values", "--dir", str(blocker))
    assert_one_line_error(done, "blocker")
    assert_one_line_error(cli("matrix", "--output", str(blocker / "m.json")), "blocker")
    assert_one_line_error(cli("matrix", "--output", str(tmp_path)), "is a folder")
    draft = next(small.rglob("*.json"))
    done = cli(
        "fixtures", "record", "--sdk", "runners/python/conform", "--from", str(draft),
        "--out", str(blocker / "x.recorded.json"),
    )  # fmt: skip
    assert_one_line_error(done, "blocker")


def test_report_paths_are_checked_before_the_run(tmp_path: Path, small: Path) -> None:
    """Issue 10 problem 10: an unwritable report path was found only after the whole run."""
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    for option in ("--report-json", "--junit", "--markdown", "--html", "--write-failures"):
        done = cli(
            "run", "--sdk", host_command("hang_on_case.py", "hostile.case-01"),
            "--fixtures", str(small), "--no-default-fixtures", "--timeout", "60",
            option, str(blocker / "report"),
        )  # fmt: skip
        assert_one_line_error(done, str(blocker))  # a run would hang 60 s: it never starts


def test_sdk_naming_a_folder_says_so(small: Path) -> None:
    done = cli("run", "--sdk", "runners/python", "--fixtures", str(small), "--no-default-fixtures")
    assert_one_line_error(done, "is a folder")


def test_jobs_are_capped(small: Path) -> None:
    done = cli("run", "--jobs", "1000", "--fixtures", str(small), "--no-default-fixtures")
    assert_one_line_error(done, "--jobs")
    help_text = " ".join(cli("run", "--help").stdout.split())
    assert "at most 64" in help_text and "python:" in help_text


def test_run_piped_into_head_still_writes_the_report(tmp_path: Path, small: Path) -> None:
    """Issue 10 problem 10: `run ... | head -1` lost the report (BrokenPipe on stdout)."""
    report = tmp_path / "report.json"
    command = (
        f"{sys.executable} -m fakepeer run --fixtures {small} --no-default-fixtures "
        f"--sdk runners/python/conform --report-json {report} | head -c 1"
    )
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=ROOT, capture_output=True, timeout=120
    )
    assert b"Traceback" not in done.stderr, done.stderr
    assert json.loads(report.read_text())["summary"]["pass"] == 1


def test_record_against_a_hanging_host_fails_loudly(tmp_path: Path, small: Path) -> None:
    draft = next(small.rglob("*.json"))
    done = cli(
        "fixtures", "record", "--sdk", host_command("hang_on_case.py", "hostile.case-01"),
        "--from", str(draft), "--out", str(tmp_path / "x.recorded.json"), "--wait", "1",
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "hanging on hostile.case-01" in done.stderr, "the host's stderr is shown"
    assert not (tmp_path / "x.recorded.json").exists()


# ----------------------------------------------------------------------------- 3 (atomic)


def _limit_file_size(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_fmt_on_a_full_disk_leaves_the_fixture_whole(tmp_path: Path) -> None:
    """Issue 10 problem 3: fmt rewrote in place, so a full disk left half a fixture."""
    path = _fixture(tmp_path, "values.padded", '{"t": "str", "v": "%s"}' % ("y" * 3000))
    before = path.read_text()
    done = cli("fixtures", "fmt", str(path), preexec_fn=_limit_file_size(1024))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert path.read_text() == before, "the fixture must be whole"
    assert [p.name for p in path.parent.iterdir()] == [path.name], "no temporary file left"


def test_a_report_that_cannot_be_written_leaves_the_old_one(tmp_path: Path, small: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"old": "report"}')
    done = cli(
        "run", "--fixtures", str(small), "--no-default-fixtures", "--sdk",
        "runners/python/conform", "--report-json", str(report),
        preexec_fn=_limit_file_size(1024),
    )  # fmt: skip
    assert done.returncode == 2 and "cannot write" in done.stderr, done.stderr
    assert report.read_text() == '{"old": "report"}'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# ----------------------------------------------------------------------------- 7 (merge)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    tmp = tmp_path_factory.mktemp("shards")
    fixtures = write_fixtures(tmp / "fixtures", tuple(f"hostile.case-{n:02d}" for n in (1, 2, 3)))
    reports = shard_reports(fixtures, tmp, "runners/python/conform")
    assert all(json.loads(report.read_text())["exit_status"] == 0 for report in reports)
    return tmp, reports


def test_merge_refuses_an_incomplete_shard_set(shards) -> None:
    tmp, (first, _) = shards
    out = tmp / "merged.json"
    assert_one_line_error(cli("merge", str(first), "--out", str(out)), "shard 2/2 missing")
    done = cli("merge", str(first), "--out", str(out), "--allow-partial")
    # merged and written, but never green: a selected case is in no report (issue 19)
    assert done.returncode == 1 and "in no report" in done.stderr, done.stderr
    assert out.exists()


def test_merge_of_every_shard_is_complete(shards) -> None:
    tmp, reports = shards
    out = tmp / "all.json"
    done = cli("merge", *map(str, reports), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(out.read_text())["summary"]["total"] == 3


def test_merge_refuses_reports_of_different_fixture_sets(shards, tmp_path: Path) -> None:
    _, (first, _) = shards
    other_fixtures = write_fixtures(tmp_path / "other", ("hostile.case-07", "hostile.case-08"))
    other = tmp_path / "other.json"
    cli(
        "run", "--fixtures", str(other_fixtures), "--no-default-fixtures", "--shard", "2/2",
        "--sdk", "runners/python/conform", "--report-json", str(other),
    )  # fmt: skip
    out = tmp_path / "m.json"
    done = cli("merge", str(first), str(other), "--out", str(out))
    assert_one_line_error(done, "different fixture selections")
    # each selection is still checked on its own: shard 1/2 of the first is not all of it
    done = cli("merge", str(first), str(other), "--out", str(out), "--allow-mixed")
    assert_one_line_error(done, "shard 2/2 missing")
    done = cli(
        "merge", str(first), str(other), "--out", str(out), "--allow-mixed", "--allow-partial"
    )  # fmt: skip
    assert done.returncode == 1 and "in no report" in done.stderr, done.stderr


def test_merge_refuses_a_broken_shape_in_one_line(shards, tmp_path: Path) -> None:
    _, (first, _) = shards
    document = json.loads(first.read_text())
    document["sdks"][0]["cases"][0]["outcome"] = 42
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    done = cli("merge", str(broken), "--out", str(tmp_path / "m.json"), "--allow-partial")
    assert_one_line_error(done, "not a valid", "/sdks/0/cases/0/outcome")


def test_merge_handles_a_report_holding_a_lone_surrogate(tmp_path: Path) -> None:
    """Issue 10 problem 7: `values.str-lone-surrogate-refused` made merge crash."""
    failing = tmp_path / "known.txt"
    report = tmp_path / "surrogate.json"
    done = cli(
        "run", "-k", "values.str-lone-surrogate-refused", "--sdk",
        host_command("crash_on_case.py", "values.str-lone-surrogate-refused"),
        "--report-json", str(report), "--write-failures", str(failing),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "\\ud" in report.read_text(), "the lone surrogate is in the report, escaped"
    out = tmp_path / "merged.json"
    for extra in ([], ["--html", str(tmp_path / "m.html"), "--junit", str(tmp_path / "m.xml")]):
        merged = cli("merge", str(report), "--out", str(out), *extra)
        assert merged.returncode == 1 and "Traceback" not in merged.stderr, merged.stderr
        assert json.loads(out.read_text())["summary"]["error"] == 1
