"""Issue 19 items 9 and 13: every bound applies to `simulate`, to fixture loading and to
lifecycle restarts; hostile command lines are one line on stderr with exit 2, never a traceback;
a trace answer with a version the bench does not speak fails its case; `merge` reads no FIFO."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hostile.bench_run import CASES, host_command, write_fixtures
from tests.support.helpers import run_cli as cli

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / "runners" / "python" / "conform")


def _one_line_usage_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("bounds-fixtures"))


@pytest.mark.parametrize("wait", ["inf", "1e308", "nan", "-1", "0"])
def test_fixtures_record_refuses_a_wait_that_is_no_bound(wait: str, tmp_path: Path) -> None:
    draft = next((ROOT / "fixtures" / "values").glob("*.json"))
    out = tmp_path / "x.recorded.json"
    done = cli("fixtures", "record", "--sdk", PYTHON, "--from", str(draft), "--out", str(out),
               "--wait", wait)  # fmt: skip
    _one_line_usage_error(done, "--wait takes a number of seconds above 0")
    assert not out.exists()


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        ("\u0663=order.approved:ok", "use ASCII digits"),  # ARABIC-INDIC DIGIT THREE
        ("\u00b2=order.approved:ok", "use ASCII digits"),  # SUPERSCRIPT TWO: isdigit, no int
        ("1=order.approved:\udcff", "not UTF-8 text"),  # a non-UTF-8 byte, as argv carries it
    ],
)
def test_simulate_event_with_a_foreign_digit_or_bytes_is_one_line(
    event: str, fragment: str
) -> None:
    argv = [sys.executable, "-m", "fakepeer", "simulate", "--function", "conform.echo"]
    raw = [os.fsencode(arg) for arg in (*argv, "--event", event)]  # \udcff becomes byte 0xff
    done = subprocess.run(raw, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    _one_line_usage_error(done, "--event", fragment)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[" * 900 + "]" * 900, "nested deeper than"),
        ("[" * 5000 + "]" * 5000, "nested deeper than"),
        ('{"a":1,"a":2}', "appears twice"),
    ],
)
def test_simulate_input_refuses_deep_nesting_and_repeated_keys(text: str, fragment: str) -> None:
    done = cli("simulate", "--function", "conform.echo", "--input", text)
    _one_line_usage_error(done, "--input", fragment)


def test_a_keyword_expression_of_100000_parentheses_is_one_line() -> None:
    done = cli("run", "--list", "-k", "(" * 100_000)
    _one_line_usage_error(done, "nested deeper than 100 levels")
    assert len(done.stderr) < 500


def test_merge_refuses_a_fifo_instead_of_reading_it_for_ever(tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)  # made here, never the machine's /dev
    done = cli("merge", str(fifo), timeout=30)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_merge_refuses_a_character_device(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    zero = tmp_path / "zero"
    os.mknod(zero, 0o600 | 0o020000, os.makedev(1, 5))  # the numbers of /dev/zero
    done = cli("merge", str(zero), timeout=30)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


@pytest.mark.parametrize("version", ["9.0", "none"])
def test_a_trace_answer_with_a_foreign_or_no_version_fails_the_case(
    version: str, fixtures: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    host = host_command("trace_version_on_case.py", CASES[2], version)
    done = cli("run", "--fixtures", str(fixtures), "--no-default-fixtures", "--report-json",
               str(report), "--sdk", host)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    cases = {c["id"]: c for c in json.loads(report.read_text())["sdks"][0]["cases"]}
    assert cases[CASES[2]]["raw_outcome"] == "fail"
    assert cases[CASES[2]]["diff"][0]["pointer"] == "/version"
    assert all(c["raw_outcome"] == "pass" for i, c in cases.items() if i != CASES[2])


def test_simulate_gives_up_on_a_host_that_never_registers(tmp_path: Path) -> None:
    host = host_command("hang_forever.py", tmp_path / "host.pid")
    started = time.monotonic()
    done = cli("simulate", "--sdk", host, "--function", "conform.echo", "--max-time", "2")
    assert time.monotonic() - started < 20
    assert done.returncode == 2 and "did not start" in done.stderr, done.stderr


def test_simulate_stops_a_run_that_never_ends_at_max_time() -> None:
    started = time.monotonic()
    done = cli("simulate", "--function", "conform.echo", "--input", '"x"', "--fault",
               "lost_answer:discover*all", "--max-time", "3", "--json")  # fmt: skip
    assert time.monotonic() - started < 60
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["stopped"] == "stopped: --max-time of 3 s"


def test_simulate_max_time_cutting_an_exchange_short_is_a_stop(tmp_path: Path) -> None:
    """The run's bound ending an invoke still in flight stops the run: the host broke nothing
    (its own --timeout had not run out). Under load the bound often falls mid-exchange."""
    host = host_command("hang_on_case.py", "server.invoke")
    done = cli("simulate", "--sdk", host, "--function", "conform.echo", "--input", '"x"',
               "--max-time", "2", "--timeout", "60", "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert (report["stopped"], report["host_fault"]) == ("stopped: --max-time of 2 s", None)
    assert "stopped: --max-time of 2 s reached" in done.stderr


def test_simulate_exchange_timeout_before_max_time_is_a_host_fault(tmp_path: Path) -> None:
    host = host_command("hang_on_case.py", "server.invoke")
    done = cli("simulate", "--sdk", host, "--function", "conform.echo", "--input", '"x"',
               "--max-time", "60", "--timeout", "1", "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["stopped"] is None and "hung" in report["host_fault"], report
    assert "the host broke the protocol" in done.stderr


@pytest.mark.parametrize("option", ["--timeout", "--max-time"])
@pytest.mark.parametrize("value", ["inf", "0", "nan"])
def test_simulate_bounds_are_checked(option: str, value: str) -> None:
    done = cli("simulate", "--function", "conform.echo", option, value)
    _one_line_usage_error(done, option)


def test_max_time_covers_fixture_loading(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fakepeer.cli import main, selection  # selection: where `run` loads the fixtures

    real = selection.load_fixtures

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(2.5)  # loading alone takes longer than --max-time
        return real(*args, **kwargs)

    monkeypatch.setattr(selection, "load_fixtures", slow)
    status = main(["run", "--fixtures", str(fixtures), "--no-default-fixtures",
                   "--sdk", PYTHON, "--max-time", "2"])  # fmt: skip
    out = capsys.readouterr().out
    assert status != 0, out
    assert "not run" in out, out


def test_lifecycle_restarts_stay_within_max_time(tmp_path: Path) -> None:
    """A scenario that restarts its host before every invocation, each start taking 3 s: the
    case ends at --max-time (it ran 51.3 s past a --max-time of 10 before the fix)."""
    case = "lifecycle.saga-host-restarted-before-every-invocation"
    started = time.monotonic()
    done = cli("run", "-k", case, "--max-time", "6", "--start-timeout", "20",
               "--sdk", host_command("slow_start_host.py", 3))  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode != 0, done.stdout
    assert elapsed < 6 + 10, elapsed  # the bound, plus start-up and the kill grace
