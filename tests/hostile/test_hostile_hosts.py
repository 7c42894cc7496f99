"""Whole bench runs against misbehaving conformance hosts (tests/hosts/).

For each host: the affected case is an `error` row with a useful reason (and the stderr tail
where the host said something before dying or hanging), every other case still passes after the
bench respawns the host, the run ends within a bound derived from its timeouts, and no process
of the host (children and grandchildren included) is alive afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .bench_run import CASES, BenchRun, host_command, run_bench, time_bound, write_fixtures

TIMEOUT = 2.0
VICTIM = "hostile.case-03"
STDERR_CAPACITY = 64 * 1024


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("hostile-fixtures"))


def _assert_clean_finish(run: BenchRun, hung_cases: int) -> None:
    assert run.leftovers == [], f"host processes outlived the run: {run.leftovers}"
    starts = run.sdk["process_starts"]
    assert run.elapsed <= time_bound(TIMEOUT, hung_cases, starts), run.elapsed
    assert [case["id"] for case in run.sdk["cases"]] == list(CASES), "a case got no outcome"


def _assert_only_victim_failed(run: BenchRun, victim: str = VICTIM) -> dict:
    outcomes = run.outcomes()
    assert outcomes[victim] == "error", run.output
    assert {c: o for c, o in outcomes.items() if c != victim} == {
        c: "pass" for c in CASES if c != victim
    }, "the other cases must still pass after the bench respawns the host"
    assert run.sdk["process_starts"] == 2, "one fresh process after the broken one"
    assert run.status == 1
    assert run.output.rstrip().splitlines()[-1] == f"{len(CASES) - 1} passed, 0 failed, 1 error"
    return run.case(victim)


# (host script and arguments, reason fragments, stderr fragment or None, hangs until timeout)
SINGLE_CASE_HOSTS = {
    "crash-on-case": (
        ("crash_on_case.py", VICTIM), ("crashed", "exited with status 9"), "crashing on", False
    ),
    "hang-on-case": (
        ("hang_on_case.py", VICTIM), ("hung", f"case timeout {TIMEOUT:g} s"), "hanging on", True
    ),
    "garbage-framed": (
        ("garbage_on_case.py", VICTIM, "framed"), ("wrote garbage",), "framed garbage", False
    ),
    "garbage-unframed": (
        ("garbage_on_case.py", VICTIM, "raw"), ("broke framing",), "raw garbage", False
    ),
    "huge-frame": (
        ("huge_frame_on_case.py", VICTIM), ("broke framing", "4294967295"), "4 GiB", False
    ),
    "wrong-request-id": (
        ("wrong_id_on_case.py", VICTIM), ("out of turn", "someone-else#1"), "answering", False
    ),
    "grandchild-holds-stdout": (
        ("grandchild_on_case.py", VICTIM), ("hung", "exited with status 5"), "grandchild", True
    ),
    "ignores-sigterm-and-hangs": (
        ("sigterm_ignorer.py", VICTIM), ("hung",), "ignoring SIGTERM", True
    ),
    "stderr-flood-then-crash": (
        ("stderr_flood.py", VICTIM, 24, "crash"), ("crashed", "status 13"), "flood done", False
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SINGLE_CASE_HOSTS))
def test_one_broken_case_is_an_error_and_the_rest_pass(
    name: str, fixtures: Path, tmp_path: Path
) -> None:
    command, reasons, stderr, hangs = SINGLE_CASE_HOSTS[name]
    run = run_bench(host_command(*command), fixtures, tmp_path, TIMEOUT)
    _assert_clean_finish(run, hung_cases=1 if hangs else 0)
    victim = _assert_only_victim_failed(run)
    assert victim["reason"], "an error row must say why"
    for fragment in reasons:
        assert fragment in victim["reason"], victim["reason"]
    if stderr is not None:
        assert stderr in victim["stderr_tail"], victim["stderr_tail"][-500:]
    assert len(victim["stderr_tail"].encode("utf-8")) <= 2 * STDERR_CAPACITY


def test_crash_mid_run_after_n_cases_is_isolated(fixtures: Path, tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    run = run_bench(host_command("crash_after_cases.py", 2, marker), fixtures, tmp_path, TIMEOUT)
    _assert_clean_finish(run, hung_cases=0)
    victim = _assert_only_victim_failed(run, CASES[2])
    assert "exited with status 11" in victim["reason"]
    assert "crashing mid-case after 2 cases" in victim["stderr_tail"]
    assert marker.read_text().startswith(CASES[2] + "#")


def test_exit_before_registering_errors_every_case_and_gives_up(
    fixtures: Path, tmp_path: Path
) -> None:
    run = run_bench(host_command("exit_before_register.py"), fixtures, tmp_path, TIMEOUT)
    _assert_clean_finish(run, hung_cases=0)
    assert set(run.outcomes().values()) == {"error"}
    for case in run.sdk["cases"]:
        assert "registration handshake failed" in case["reason"], case["reason"]
        assert "exited with status 3" in case["reason"], case["reason"]
    assert "cannot load my SDK" in run.case(CASES[0])["stderr_tail"]
    assert run.sdk["process_starts"] <= 3, "the bench must give up on an SDK that cannot start"
    assert run.status == 1
    assert run.output.rstrip().splitlines()[-1] == f"0 passed, 0 failed, {len(CASES)} errors"


def test_stderr_flood_does_not_block_or_fail_the_case(fixtures: Path, tmp_path: Path) -> None:
    command = host_command("stderr_flood.py", VICTIM, 32, "answer")
    run = run_bench(command, fixtures, tmp_path, TIMEOUT)
    _assert_clean_finish(run, hung_cases=0)
    assert set(run.outcomes().values()) == {"pass"}, run.output
    assert run.status == 0
    assert run.sdk["process_starts"] == 1


def test_parallel_jobs_with_a_hanging_host_leave_nothing_behind(
    fixtures: Path, tmp_path: Path
) -> None:
    command = host_command("sigterm_ignorer.py", VICTIM)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT, "--jobs", "2")
    _assert_clean_finish(run, hung_cases=1)
    outcomes = run.outcomes()
    assert outcomes[VICTIM] == "error"
    assert [c for c, o in outcomes.items() if o != "pass"] == [VICTIM]


def test_duplicate_answer_is_blamed_on_the_case_that_answered_twice(
    fixtures: Path, tmp_path: Path
) -> None:
    """Seen right after the victim's script or during a later case: the victim is the error."""
    command = host_command("double_answer_on_case.py", VICTIM, 0)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT)
    _assert_clean_finish(run, hung_cases=0)
    broken = {case: o for case, o in run.outcomes().items() if o != "pass"}
    assert broken == {VICTIM: "error"}, run.output
    assert f"{VICTIM}#1" in run.case(VICTIM)["reason"], run.case(VICTIM)["reason"]
