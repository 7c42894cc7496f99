"""The bench as an HTTP client under a hostile network (issue 35): a proxy in front of the
Python reference host (`tests/hosts/http_proxy.py`) misbehaves on one case's responses, and the
whole run must end as one failing row, within its deadlines, with no callback run twice.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fakepeer.cases.loader import repository_root
from tests.hostile.bench_run import CASES, host_command, run_bench, time_bound, write_fixtures

TIMEOUT = 3.0
TARGET = CASES[2]


def _proxy(mode: str, case: str = TARGET) -> str:
    return "http+cmd:" + host_command("http_proxy.py", mode, case)


def _one_row(run, words: str) -> None:
    """The target case alone failed, with `words` in its reason; every other case passed."""
    outcomes = run.outcomes()
    assert outcomes.pop(TARGET) == "error", run.output
    assert words in run.case(TARGET)["reason"], run.case(TARGET)["reason"]
    assert set(outcomes.values()) == {"pass"}, run.output
    assert run.status != 0 and not run.leftovers


def test_a_second_response_to_one_request_fails_its_case(tmp_path: Path) -> None:
    """Before: the copy was dropped unread and the run was green."""
    run = run_bench(_proxy("double"), write_fixtures(tmp_path / "f"), tmp_path, TIMEOUT)
    _one_row(run, "an extra 'completed' frame")  # as a second frame on a framed stream


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("drip", "hung: sent"),  # a body dripped a byte every 0.2 s: the case deadline holds
        ("endless", "hung: did not end its chunked body"),  # never ends: the deadline holds
        ("huge", "sent a response over 16777216 bytes"),  # past the limit: refused unbuffered
    ],
)
def test_a_body_read_never_outlives_the_case_deadline(
    tmp_path: Path, mode: str, words: str
) -> None:
    run = run_bench(_proxy(mode), write_fixtures(tmp_path / "f"), tmp_path, TIMEOUT)
    _one_row(run, words)
    assert run.elapsed < time_bound(TIMEOUT, hung_cases=1, starts=2), run.elapsed


def test_with_jobs_a_never_ending_body_is_one_row_too(tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "f")
    run = run_bench(_proxy("endless"), fixtures, tmp_path, TIMEOUT, "--jobs", "2")
    _one_row(run, "did not end its chunked body")
    assert run.elapsed < time_bound(TIMEOUT, hung_cases=1, starts=3), run.elapsed


def test_an_idle_connection_the_endpoint_closed_is_reopened(tmp_path: Path) -> None:
    """Closing after every complete answer (no `Connection: close`) costs nothing."""
    run = run_bench(_proxy("idle-close"), write_fixtures(tmp_path / "f"), tmp_path, TIMEOUT)
    assert set(run.outcomes().values()) == {"pass"} and run.status == 0, run.output


def test_a_request_already_written_is_never_sent_again(tmp_path: Path, monkeypatch) -> None:
    """The connection is cut after the host answered the target's invoke: an error, and the
    invoke reached the host once (sending it again would run its callbacks twice)."""
    log = tmp_path / "requests.log"
    monkeypatch.setenv("RYUSEN_PROXY_LOG", str(log))
    run = run_bench(_proxy("cut"), write_fixtures(tmp_path / "f"), tmp_path, TIMEOUT)
    _one_row(run, "closed the connection before its answer")
    sent = [line for line in log.read_text().splitlines() if line.startswith(TARGET + "#")]
    assert len(sent) == len(set(sent)), sent  # each of the case's requests at most once


def test_registration_answers_are_bounded_by_start_timeout(tmp_path: Path) -> None:
    """A register answer that never ends: every start gives up at --start-timeout."""
    fixtures = write_fixtures(tmp_path / "f")
    proxy = _proxy("endless", "conform.register")
    run = run_bench(proxy, fixtures, tmp_path, TIMEOUT, "--start-timeout", "1")
    assert set(run.outcomes().values()) == {"error"}, run.output
    assert "registration handshake failed" in run.case(CASES[0])["reason"]
    assert run.elapsed < time_bound(1.0, hung_cases=2, starts=2), run.elapsed


@pytest.mark.parametrize("bound", [["--start-timeout", "1"], ["--max-time", "3"]])
def test_a_host_that_never_prints_its_url_is_bounded(tmp_path: Path, bound: list[str]) -> None:
    """Before: 10 s per start whatever --start-timeout or --max-time said."""
    run = run_bench(_proxy("no-url"), write_fixtures(tmp_path / "f"), tmp_path, TIMEOUT, *bound)
    assert run.outcomes() and "pass" not in run.outcomes().values(), run.output
    assert run.status != 0 and not run.leftovers
    assert run.elapsed < time_bound(3.0, hung_cases=1, starts=2), run.elapsed
    if bound[0] == "--start-timeout":
        assert "printed no endpoint URL" in run.case(CASES[0])["reason"], run.case(CASES[0])


def test_simulate_stops_a_never_ending_body_at_max_time() -> None:
    command = [sys.executable, "-m", "fakepeer", "simulate", "--sdk", _proxy("endless", "invoke")]
    command += ["--function", "conform.saga", "--input", '{"order": "o-1"}', "--max-time", "3"]
    done = subprocess.run(
        command, cwd=repository_root(), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stdout + done.stderr


def test_fixtures_record_gives_up_on_a_never_ending_body(tmp_path: Path) -> None:
    draft = repository_root() / "fixtures" / "values" / "values.bytes-empty.json"
    command = [sys.executable, "-m", "fakepeer", "fixtures", "record", "--wait", "2"]
    command += ["--sdk", _proxy("endless", "invoke"), "--from", str(draft)]
    command += ["--out", str(tmp_path / "x.recorded.json")]
    done = subprocess.run(
        command, cwd=repository_root(), capture_output=True, text=True, timeout=60, check=False
    )
    assert "answered none of the draft's sends within 2 s" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
