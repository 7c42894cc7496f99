"""`fuzz --semantics`: the reference SDKs agree with the oracle; a mutant is caught with a
shrunk draft fixture; options and a bad SDK give one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from fakepeer.cases import repository_root
from fakepeer.fuzz.cli import register_commands
from fakepeer.fuzz.programs import Choices, build_case, step_ids_in
from fakepeer.fuzz.semantic_campaign import SemanticSetupError, run_semantic_campaign
from fakepeer.fuzz.semantic_check import expectation_of
from fakepeer.oracle import Unmodeled
from fakepeer.oracle.trace import trace_difference
from fakepeer.session import command_target, default_target

ROOT = repository_root()
MUTANT_HOST = ROOT / "tests" / "mutants" / "mutant_host.py"
SEED = 20261201


def _cli() -> typer.Typer:
    app = typer.Typer()
    register_commands(app)

    @app.command("other")
    def other() -> None:  # a second command, so `fuzz` is a subcommand
        pass

    return app


def test_choices_past_the_end_are_the_simplest() -> None:
    choices = Choices(b"")
    assert choices.int(5) == 0 and not choices.flag() and choices.pick(("a", "b")) == "a"
    case = build_case(b"")
    assert case.body["function_id"] == "conform.program" and case.body["mode"] == "discover"
    assert step_ids_in(case.body["input"]) == []


def test_generated_cases_cover_every_answer_kind() -> None:
    import random

    rng = random.Random(SEED)
    kinds = set()
    for _ in range(3000):
        try:
            kinds.add(expectation_of(build_case(rng.randbytes(200))).kind)
        except Unmodeled:
            pass
    assert kinds >= {"declared", "completed", "failed", "definition_blocked", "step_completed",
                     "step_failed", "compensation_completed", "compensation_failed",
                     "target_not_found", "rejected_before_start", "protocol_error"}  # fmt: skip


def test_python_reference_agrees_with_the_oracle() -> None:
    result = run_semantic_campaign(default_target(), examples=300, seed=SEED)
    assert result.failure is None, result.failure and result.failure.problem
    assert result.played == 300


def test_node_reference_agrees_with_the_oracle() -> None:
    node = command_target(str(ROOT / "runners" / "node" / "conform"), cwd=ROOT)
    result = run_semantic_campaign(node, examples=300, seed=SEED)
    assert result.failure is None, result.failure and result.failure.problem


def test_a_mutant_is_found_shrunk_and_drafted(tmp_path: Path) -> None:
    target = command_target(f"{sys.executable} {MUTANT_HOST} no-duplicate-blocker", cwd=ROOT)
    result = run_semantic_campaign(target, examples=2000, seed=SEED, out=tmp_path)
    failure = result.failure
    assert failure is not None and "definition_blocked" in failure.problem
    ops = failure.case.body["input"]["v"]["ops"]["v"]
    assert len(ops) == 2, ops  # shrunk: the same step ID twice, nothing else
    assert failure.path is not None and failure.path.name.endswith(".recorded.json")
    draft = json.loads(failure.path.read_text(encoding="utf-8"))
    assert draft["rule"]["quote"].startswith("TODO") and draft["category"] == "duplicates"
    assert draft["steps"][-1]["expect"]["kind"] == "definition_blocked"


def test_same_seed_same_counterexample() -> None:
    target = command_target(f"{sys.executable} {MUTANT_HOST} attempt-off-by-one", cwd=ROOT)
    first = run_semantic_campaign(target, examples=500, seed=SEED)
    second = run_semantic_campaign(target, examples=500, seed=SEED)
    assert first.failure and second.failure
    assert first.failure.case == second.failure.case
    assert first.failure.found_after == second.failure.found_after


def test_a_caught_suspension_by_catch_is_a_difference() -> None:
    caught = [{"event": "caught", "by": "catch", "what": "suspension"}]
    assert "only catch_all" in (trace_difference((), caught) or "")
    allowed = [{"event": "caught", "by": "catch_all", "what": "suspension"}]
    assert trace_difference((), allowed) is None
    late_start = [{"event": "started", "step_id": "a", "phase": "forward",
                   "operation_id": "o", "attempt": 1}]  # fmt: skip
    assert "after the answer was fixed" in (trace_difference((), late_start) or "")


def test_max_time_bounds_the_campaign() -> None:
    result = run_semantic_campaign(default_target(), examples=1_000_000, seed=SEED, max_time=3)
    assert result.timed_out and result.seconds < 30


def test_cli_semantics_and_one_line_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(_cli(), ["fuzz", "--semantics", "--examples", "20", "--seed", "1"])
    assert ok.exit_code == 0, ok.output
    assert "20 example(s) played" in ok.output and "0 disagreement(s)" in ok.output
    for args, message in [
        (["fuzz", "--max-time", "3"], "--max-time bounds a --semantics or --whole-runs campaign"),
        (["fuzz", "--semantics", "--max-time", "0"], "--max-time must be a positive"),
    ]:
        bad = runner.invoke(_cli(), args)
        assert bad.exit_code == 2 and message in bad.output, bad.output
        assert len(bad.output.strip().splitlines()) == 1
    missing = runner.invoke(_cli(), ["fuzz", "--semantics", "--sdk", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "error" in missing.output


def test_an_sdk_that_cannot_start_is_a_setup_error() -> None:
    broken = command_target(f"{sys.executable} -c pass", cwd=ROOT)
    try:
        run_semantic_campaign(broken, examples=5, seed=1)
    except SemanticSetupError as exc:
        assert "cannot start" in str(exc)
    else:
        raise AssertionError("no setup error")


def test_whole_runs_hold_their_invariants_on_the_reference_sdk() -> None:
    runner = CliRunner()
    ok = runner.invoke(_cli(), ["fuzz", "--whole-runs", "15", "--seed", "3"])
    assert ok.exit_code == 0, ok.output
    assert "played 15 whole run(s)" in ok.output and "0 broke an invariant" in ok.output


def test_whole_runs_catch_a_callback_rerun_on_replay() -> None:
    runner = CliRunner()
    sdk = f"{sys.executable} {MUTANT_HOST} replay-reruns-callback"
    bad = runner.invoke(_cli(), ["fuzz", "--whole-runs", "5", "--seed", "1", "--sdk", sdk])
    assert bad.exit_code == 1, bad.output
    assert "callback-once-per-attempt" in bad.output


def test_whole_runs_and_semantics_are_one_at_a_time() -> None:
    bad = CliRunner().invoke(_cli(), ["fuzz", "--whole-runs", "2", "--semantics"])
    assert bad.exit_code == 2 and "one at a time" in bad.output


def test_several_sdks_get_the_same_campaign_and_a_result_each(tmp_path: Path) -> None:
    mutant = f"{sys.executable} {MUTANT_HOST} no-duplicate-blocker"
    reference = str(ROOT / "runners" / "python" / "conform")
    args = ["fuzz", "--semantics", "--examples", "300", "--seed", "26", "--out", str(tmp_path)]
    result = CliRunner().invoke(_cli(), [*args, "--sdk", reference, "--sdk", mutant])
    assert result.exit_code == 1, result.output  # the worst of the two: a disagreement
    lines = result.output.splitlines()
    assert f"=== {reference}" in lines and f"=== {mutant}" in lines
    assert lines[-2:] == [f"{reference}: no counterexample", f"{mutant}: COUNTEREXAMPLE FOUND"]
    summaries = [line for line in lines if line.startswith("fuzzed ")]
    assert len(summaries) == 2 and all("seed 26" in line for line in summaries)
    drafts = list(tmp_path.rglob("*.recorded.json"))
    assert len(drafts) == 1 and drafts[0].parent.parent.name.endswith("no-duplicate-blocker")


def test_several_sdks_one_that_cannot_start_is_an_error_the_others_still_run() -> None:
    broken = f"{sys.executable} -c pass"
    result = CliRunner().invoke(
        _cli(), ["fuzz", "--semantics", "--examples", "20", "--sdk", broken, "--sdk",
                 str(ROOT / "runners" / "python" / "conform")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1].endswith("conform: no counterexample")
    assert f"{broken}: ERROR: could not be fuzzed" in result.output
    assert "20 example(s) played" in result.output


def test_the_same_sdk_twice_is_one_line_error() -> None:
    reference = str(ROOT / "runners" / "python" / "conform")
    result = CliRunner().invoke(
        _cli(), ["fuzz", "--semantics", "--sdk", reference, "--sdk", reference]
    )
    assert result.exit_code == 2 and "given twice" in result.output
    assert len(result.output.strip().splitlines()) == 1
