"""Whole bench runs: each error row is pinned on the right case, with the evidence it needs.

Why: a row is all an SDK author gets. A late copy of case A's answer must make A the error,
not whichever later case read it; the stderr tail must hold what a still-running host wrote
just before it misbehaved; an SDK given up on keeps its last start's stderr on every row; and a
"hang" of a host that already exited says so, with its exit status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .bench_run import CASES, host_command, run_bench, time_bound, write_fixtures

TIMEOUT = 2.0
FIRST, DURING = CASES[2], CASES[3]
#: Enough cases after the first that a copy sent 5 ms later is read during the run.
MANY = tuple(f"hostile.case-{n:03d}" for n in range(1, 121))


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixtures(tmp_path_factory.mktemp("attribution-fixtures"))


def _only_error(outcomes: dict[str, str], case: str) -> None:
    assert outcomes[case] == "error", outcomes
    assert {c for c, o in outcomes.items() if o != "pass"} == {case}, outcomes


@pytest.mark.parametrize("when", ["reset", "invoke", "after"])
def test_a_late_copy_is_the_error_of_the_case_that_answered_twice(
    when: str, fixtures: Path, tmp_path: Path
) -> None:
    command = host_command("late_copy_on_case.py", FIRST, DURING, when)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    assert run.elapsed <= time_bound(TIMEOUT, 0, run.sdk["process_starts"])
    _only_error(run.outcomes(), FIRST)
    first = run.case(FIRST)
    assert first["reason"].startswith(f"answered twice: a second answer with id '{FIRST}#1'")
    assert "arrived during case 'hostile.case-0" in first["reason"]
    if when != "after":  # `after` may be read by the next case's reset instead
        assert first["reason"].endswith(f"arrived during case '{DURING}'")
    copy = first["wire"][-1]
    assert copy["direction"] == "received" and copy["json"]["id"] == f"{FIRST}#1"
    assert run.sdk["process_starts"] == 2, "the interrupted case replays on a fresh process"
    interrupted = first["reason"].rsplit("arrived during case ", 1)[1].strip("'")
    replayed = run.case(interrupted)
    assert replayed["raw_outcome"] == "pass", replayed["reason"]
    assert replayed["wire"] == [], "a passing case keeps no wire log (bounded memory)"
    assert run.status == 1
    assert run.output.rstrip().splitlines()[-1] == f"{len(CASES) - 1} passed, 0 failed, 1 error"


def test_a_timed_double_answer_blames_the_case_that_answered(tmp_path: Path) -> None:
    fixtures = write_fixtures(tmp_path / "fixtures", MANY)
    command = host_command("double_answer_on_case.py", MANY[2], 0.005)
    run = run_bench(command, fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    _only_error(run.outcomes(), MANY[2])
    assert f"'{MANY[2]}#1'" in run.case(MANY[2])["reason"]


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (("garbage_on_case.py", FIRST, "framed"), f"writing framed garbage for {FIRST}#1"),
        (("garbage_on_case.py", FIRST, "raw"), f"writing raw garbage for {FIRST}#1"),
        (("huge_frame_on_case.py", FIRST), f"announcing 4 GiB for {FIRST}#1"),
        (("wrong_id_on_case.py", FIRST), f"answering {FIRST}#1 as 'someone-else#1'"),
    ],
)
def test_a_live_hosts_last_words_are_in_the_error_row(
    command: tuple, said: str, fixtures: Path, tmp_path: Path
) -> None:
    run = run_bench(host_command(*command), fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    _only_error(run.outcomes(), FIRST)
    assert said in run.case(FIRST)["stderr_tail"]


def test_every_row_of_an_sdk_given_up_keeps_the_last_starts_stderr(
    fixtures: Path, tmp_path: Path
) -> None:
    run = run_bench(host_command("exit_before_register.py"), fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    assert run.sdk["process_starts"] == 2
    for case in run.sdk["cases"]:
        assert "cannot load my SDK" in case["stderr_tail"], case["id"]
        assert "exited with status 3" in case["reason"], case["reason"]


def test_a_hang_of_an_exited_host_names_its_exit_status(fixtures: Path, tmp_path: Path) -> None:
    run = run_bench(host_command("grandchild_on_case.py", FIRST), fixtures, tmp_path, TIMEOUT)
    assert run.leftovers == []
    _only_error(run.outcomes(), FIRST)
    reason = run.case(FIRST)["reason"]
    assert reason.startswith("hung: sent no complete frame"), reason
    assert "the host process itself had already exited with status 5" in reason, reason
