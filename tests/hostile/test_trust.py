"""The gate never lies and never hangs (issue 10): whole runs against hosts built to break it.

Each test names the problem of issue 10 it keeps from coming back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from fakepeer.cases.loader import repository_root
from fakepeer.session.sdk import SdkSession
from fakepeer.transport import SubprocessTransport, TransportTimeout

from .bench_run import (
    CASES,
    MARK_VARIABLE,
    host_command,
    marked_processes,
    run_bench,
    time_bound,
    wait_for_no_marked,
    write_fixtures,
)

TIMEOUT = 2.0
VICTIM = "hostile.case-03"
LAST = CASES[-1]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("trust-fixtures"))


def strict_json(text: str) -> object:
    """json.loads that refuses NaN and Infinity: what any strict reader of a report does."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} in a report")

    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------------------- 1 and 4


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    "mode", ["deep", "deep-value", "duplicate-key", "nan", "infinity", "overflow"]
)
def test_a_frame_the_protocol_refuses_is_an_error_row_never_a_pass_or_a_lost_case(
    mode: str, jobs: str, fixtures: Path, tmp_path: Path
) -> None:
    """Issue 10 problems 1 and 4: deep frames lost a case (or crashed the bench); duplicate
    keys, NaN, Infinity and 1e400 passed and made the report invalid JSON."""
    command = host_command("tampered_answer_on_case.py", VICTIM, mode)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT, "--jobs", jobs)
    assert run.leftovers == []
    assert [case["id"] for case in run.sdk["cases"]] == list(CASES), "a case got no outcome"
    outcomes = run.outcomes()
    assert outcomes[VICTIM] == "error", run.output
    assert {c for c, o in outcomes.items() if o != "pass"} == {VICTIM}
    assert "wrote garbage" in run.case(VICTIM)["reason"]
    assert run.status == 1
    assert run.output.rstrip().splitlines()[-1] == f"{len(CASES) - 1} passed, 0 failed, 1 error"
    report = next(tmp_path.glob("report-*.json")).read_text(encoding="utf-8")
    strict_json(report)


# ----------------------------------------------------------------------------- 2 (shutdown)


def test_shutdown_against_a_host_that_stopped_reading_is_bounded() -> None:
    """Issue 10 problem 2: the final `conform.shutdown` write had no deadline."""
    transport = SubprocessTransport(host_command("never_reads.py").split(" "))
    try:
        with pytest.raises(TransportTimeout):  # fill the pipe: the host reads nothing
            transport.send_many([b"x" * 1_000_000], time.monotonic() + 0.5)
        session = SdkSession(lambda: transport)
        session.transport = transport
        done = threading.Event()

        def shut() -> None:
            session.shutdown()
            done.set()

        started = time.monotonic()
        threading.Thread(target=shut, daemon=True).start()
        assert done.wait(10), "shutdown hung on a host that stopped reading"
        assert time.monotonic() - started < 5
        assert transport.exit_status() is not None, "the host must be gone"
    finally:
        transport.close()


# ----------------------------------------------------------------------------- 5


@pytest.mark.parametrize("delay", ["0", "0.05"])
def test_a_second_answer_to_the_last_case_of_a_session_is_noticed(
    delay: str, fixtures: Path, tmp_path: Path
) -> None:
    """Issue 10 problem 5: the last case of a session could answer twice and pass."""
    command = host_command("double_answer_on_case.py", LAST, delay)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    outcomes = run.outcomes()
    assert {c for c, o in outcomes.items() if o != "pass"} == {LAST}, run.output
    reason = run.case(LAST)["reason"]
    assert f"'{LAST}#1'" in reason, reason
    if delay != "0":  # at once, the copy may already wait when the script ends
        assert reason.startswith(f"answered twice: a second answer with id '{LAST}#1'"), reason
        assert "after the session's last case" in reason
    assert run.status == 1


# ----------------------------------------------------------------------------- 6


def test_a_descendant_that_left_the_process_group_is_killed(fixtures: Path, tmp_path: Path) -> None:
    """Issue 10 problem 6: a host's child that called setsid() outlived the run."""
    run = run_bench(host_command("setsid_child_on_case.py", VICTIM), fixtures, tmp_path, TIMEOUT)
    assert set(run.outcomes().values()) == {"pass"}, run.output
    assert run.leftovers == [], f"host processes outlived the run: {run.leftovers}"


SIGNALS = {
    "SIGINT twice": (signal.SIGINT, 2),
    "SIGTERM": (signal.SIGTERM, 1),
    "SIGHUP": (signal.SIGHUP, 1),
    "SIGQUIT": (signal.SIGQUIT, 1),
}


@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_stops_the_run_cleanly_and_writes_a_partial_report(
    name: str, fixtures: Path, tmp_path: Path
) -> None:
    """Issue 10 problems 6 and 10: SIGHUP and SIGQUIT (or a second Ctrl-C) left the host
    running; SIGINT and SIGTERM printed nothing and wrote no report."""
    signum, times = SIGNALS[name]
    mark = uuid.uuid4().hex
    report = tmp_path / "report.json"
    argv = [
        sys.executable, "-m", "fakepeer", "run",
        "--sdk", host_command("hang_on_case.py", VICTIM),
        "--fixtures", str(fixtures), "--no-default-fixtures", "--timeout", "60",
        "--report-json", str(report),
    ]  # fmt: skip
    env = dict(os.environ, **{MARK_VARIABLE: mark})
    bench = subprocess.Popen(
        argv, cwd=repository_root(), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not set(marked_processes(mark)) - {bench.pid}:
            time.sleep(0.05)
        time.sleep(2.0)  # the host hangs on the victim's invoke by now
        for _ in range(times):
            bench.send_signal(signum)
            time.sleep(0.05)
        out, err = bench.communicate(timeout=20)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
        leftovers = wait_for_no_marked(mark)
        for pid in leftovers:
            os.kill(pid, signal.SIGKILL)
    assert leftovers == [], "host processes outlived the interrupted run"
    assert bench.returncode == 130, err.decode()
    message = err.decode()
    assert f"interrupted by {signal.Signals(signum).name}" in message, message
    assert "Traceback" not in message
    document = strict_json(report.read_text(encoding="utf-8"))
    assert document["interrupted"] is True and document["exit_status"] == 130
    cases = {case["id"]: case for case in document["sdks"][0]["cases"]}
    assert list(cases) == list(CASES), "every case is in the partial report"
    assert cases[VICTIM]["outcome"] == "error" and cases[VICTIM]["not_run"] is True
    assert all(cases[c]["outcome"] == "pass" for c in CASES[: CASES.index(VICTIM)])
    assert all(cases[c].get("not_run") for c in CASES[CASES.index(VICTIM) :])
    done = CASES.index(VICTIM)
    errors = len(CASES) - done
    assert out.decode().rstrip().splitlines()[-1] == (
        f"{done} passed, 0 failed, {errors} error{'s' if errors != 1 else ''}"
    )


def test_max_time_bounds_the_whole_run_cleanup_included(fixtures: Path, tmp_path: Path) -> None:
    """Issue 10 problem 2: --max-time bounds the run whatever the host does."""
    command = host_command("sigterm_ignorer.py", VICTIM)
    run = run_bench(command, fixtures, tmp_path, 60, "--max-time", "3")
    assert run.leftovers == []
    # the run itself, as the bench timed it: the bound plus one kill grace and a /proc scan
    assert run.sdk["duration"] < 3 + 1.5, run.sdk["duration"]
    assert run.elapsed < time_bound(0, 0, 0) + 3, run.elapsed  # interpreter start-up
    assert [case["id"] for case in run.sdk["cases"]] == list(CASES)
    assert run.status == 1


# ----------------------------------------------------------------------------- 10


def test_a_banner_on_stdout_is_quoted_with_a_hint(fixtures: Path, tmp_path: Path) -> None:
    """Issue 10 problem 10: a banner was reported as `a frame of 1299796804 bytes`."""
    run = run_bench(host_command("banner_host.py"), fixtures, tmp_path, TIMEOUT)
    reason = run.case(CASES[0])["reason"]
    assert "Mock SDK v1.2 starting up" in reason, reason
    assert "stderr" in reason, reason
    assert run.status == 1


def test_stderr_escapes_and_ci_annotations_are_neutralised(fixtures: Path, tmp_path: Path) -> None:
    """Issue 10 problem 10: an SDK's stderr was copied raw into the bench's output."""
    run = run_bench(host_command("escapes_on_case.py", VICTIM), fixtures, tmp_path, TIMEOUT)
    assert run.outcomes()[VICTIM] == "error"
    assert "injected annotation" in run.output, "the text itself is still shown"
    assert "\x1b" not in run.output and "\x07" not in run.output
    for line in run.output.splitlines():
        assert not line.lstrip().startswith(("::", "##vso[")), line
    tail = run.case(VICTIM)["stderr_tail"]
    assert "\x1b" not in tail and "screen cleared" in tail
    assert time_bound(TIMEOUT, 0, 2) > run.elapsed
