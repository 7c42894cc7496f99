"""Issue 19 items 4, 5 and 8: a second answer always finds the case that owns it.

A late copy escaped (read by nobody: the bench listened 0.2 s after a session), landed on an
innocent case (its owner more than 32 cases back, or its id shared by a variant or another
scenario run), was discarded unseen when a lifecycle scenario restarted its host, or was blamed
by the pytest plugin on an item already reported passed. Each made a run green.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakepeer.server.host import HostLink
from fakepeer.session.sdk import SdkSession
from tests.hostile.bench_run import host_command, run_bench, write_fixtures
from tests.support.helpers import REPO
from tests.support.mock_sdk import MockSdk


def _cases(count: int) -> tuple[str, ...]:
    return tuple(f"hostile.case-{n:02d}" for n in range(1, count + 1))


def test_a_copy_a_third_of_a_second_after_the_last_case_is_caught(tmp_path: Path) -> None:
    cases = _cases(3)
    fixtures = write_fixtures(tmp_path / "fixtures", cases)
    run = run_bench(
        host_command("double_answer_on_case.py", cases[-1], 0.35), fixtures, tmp_path, 5
    )
    assert run.status == 1, run.output
    assert run.outcomes()[cases[-1]] == "error"
    assert "answered twice" in run.case(cases[-1])["reason"]


def test_a_stray_finds_its_owner_more_than_32_cases_back(tmp_path: Path) -> None:
    cases = _cases(40)
    fixtures = write_fixtures(tmp_path / "fixtures", cases)
    listed = tmp_path / "known.txt"
    listed.write_text(f"{cases[-1]}  # the innocent case the copy landed on\n")
    sdk = host_command("late_copy_on_case.py", cases[0], cases[-1], "invoke")
    run = run_bench(sdk, fixtures, tmp_path, 5, "--known-failures", str(listed), "--lenient")
    assert run.status == 1, run.output
    outcomes = run.outcomes()
    assert outcomes[cases[0]] == "error", run.case(cases[0])
    assert "answered twice" in run.case(cases[0])["reason"]
    assert outcomes[cases[-1]] == "pass", run.case(cases[-1])


def test_a_stray_finds_its_owner_when_a_variant_ran_the_same_fixture(tmp_path: Path) -> None:
    cases = _cases(3)
    fixtures = write_fixtures(tmp_path / "fixtures", cases)
    sdk = host_command("late_copy_on_case.py", cases[0], f"{cases[1]}@reordered", "invoke")
    run = run_bench(sdk, fixtures, tmp_path, 5, "--variants", "reordered")
    assert run.status == 1, run.output
    outcomes = run.outcomes()
    assert outcomes[cases[0]] == "error", outcomes
    assert outcomes[f"{cases[0]}@reordered"] == "pass", outcomes
    assert outcomes[f"{cases[1]}@reordered"] == "pass", outcomes


def test_scenario_runs_never_repeat_an_exchange_id() -> None:
    session = SdkSession(MockSdk().factory)
    first, second = HostLink(session), HostLink(session)
    assert next(first._ids) != next(second._ids)


def test_a_duplicate_trace_answer_before_a_lifecycle_restart_is_caught(tmp_path: Path) -> None:
    """The last trace of the first host process (one per invocation before the scenario's
    restart, counted from its `invocations`) is answered twice."""
    scenario = json.loads(
        (REPO / "fixtures/lifecycle/lifecycle.host-restart-during-timer.json").read_text("utf-8")
    )["lifecycle"]
    restart_at = next(item["at"] for item in scenario["script"] if item.get("restart"))
    before = [
        line for line in scenario["expect"]["invocations"] if int(line[1:].split()[0]) < restart_at
    ]
    once = tmp_path / "once"
    sdk = host_command("double_answer_on_kind.py", "conform.trace", len(before), once)
    done = subprocess.run(
        [
            sys.executable, "-m", "fakepeer", "run", "--sdk", sdk,
            "-k", "lifecycle.host-restart-during-timer", "--timeout", "30",
        ],
        capture_output=True, text=True, timeout=300, check=False,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert once.exists(), output
    assert done.returncode == 1, output
    assert "before the scenario restarted the host" in output, output


def test_the_pytest_plugin_fails_an_item_that_answered_twice(tmp_path: Path) -> None:
    """The copy came during the next item: the plugin blamed an item pytest had passed."""
    cases = _cases(3)
    fixtures = write_fixtures(tmp_path / "fixtures", cases)
    sdk = host_command("late_copy_on_case.py", cases[0], cases[1], "invoke")
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "--ryusen-sdk", sdk, "--ryusen-fixtures", str(fixtures),
            "--ryusen-no-default-fixtures",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    assert f"{cases[0]}[answered-twice]" in done.stdout, done.stdout[-3000:]
    assert "answered twice" in done.stdout
