"""CI recipes that run (issue 11.3): action.yml's steps under a simulated GITHUB_* environment,
two shards merged as docs/ci.md's workflows do, and every workflow in docs/ci.md well formed.

The `install` step (`pip install <action path>`) is not run here: this environment already has
the bench installed editable, and tests/test_wheel.py installs the built package into a fresh
venv. `uses:` steps (setup-python, upload-artifact) are GitHub's; the test checks what they are
given instead (the artifact path holds the reports).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
PYTHON_HOST = str(ROOT / "runners" / "python" / "conform")
MUTANT = f"{sys.executable} {ROOT / 'tests' / 'mutants' / 'mutant_host.py'} replay-reruns-callback"
_EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _evaluate(text: str, context: dict[str, str]) -> str:
    """The `${{ name }}` expressions the action uses (no operators, by design)."""
    return _EXPRESSION.sub(lambda m: context[m.group(1)], text)


def run_action(workspace: Path, **given: str) -> tuple[int, dict[str, str], str, list]:
    """Run the action's bash steps; return (status, step outputs, summary, `uses` steps)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    for name, spec in ACTION["inputs"].items():
        assert not spec.get("required") or inputs[name], f"input {name} is required"
    context = {f"inputs.{k}": v for k, v in inputs.items()} | {"github.action_path": str(ROOT)}
    summary, outputs = workspace / "step_summary.md", workspace / "github_output"
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(outputs),
        GITHUB_ACTION_PATH=str(ROOT),
    )
    summary.write_text("", encoding="utf-8")
    outputs.write_text("", encoding="utf-8")
    status, uses = 0, []
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:
            uses.append(
                {k: _evaluate(str(v), context) for k, v in step.get("with", {}).items()}
                | {"uses": step["uses"]}
            )
            continue
        if step.get("id") == "install":
            continue
        assert step["shell"] == "bash"
        step_env = {k: _evaluate(str(v), context) for k, v in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=env | step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        status = done.returncode
        if status:
            break
    step_outputs = dict(
        line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines() if line
    )
    return status, step_outputs, summary.read_text(encoding="utf-8"), uses


def _testcases(path: Path) -> list:
    return list(ElementTree.parse(path).getroot().iter("testcase"))


def test_a_green_run_writes_junit_summary_html_and_outputs(tmp_path: Path) -> None:
    status, outputs, summary, uses = run_action(tmp_path, sdk=PYTHON_HOST, args="-k timers")
    assert status == 0
    assert outputs["exit-code"] == "0"
    junit = tmp_path / outputs["junit"]
    assert junit.is_file() and len(_testcases(junit)) > 0
    assert (tmp_path / outputs["html"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / outputs["report-json"]).is_file()
    cases = len(_testcases(junit))
    assert summary.startswith("# Ryusen conformance report")
    assert f"| timers | {cases} | 0 |" in summary
    artifact = next(step for step in uses if step["uses"].startswith("actions/upload-artifact"))
    assert artifact["name"] == "ryusen-conform-report"
    assert (tmp_path / artifact["path"] / "report.html").is_file()


def test_a_failing_sdk_fails_the_step_and_still_reports(tmp_path: Path) -> None:
    status, outputs, summary, _ = run_action(tmp_path, sdk=MUTANT, args="-k replay.")
    assert status == 1
    assert outputs["exit-code"] == "1"
    assert "replay.callback-not-rerun" in summary
    failed = [c for c in _testcases(tmp_path / outputs["junit"]) if c.find("failure") is not None]
    assert failed


def test_known_failures_input_turns_the_failures_into_xfails(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    run_action(first, sdk=MUTANT, args="-k replay. --write-failures known.txt")
    known = first / "known.txt"
    assert known.is_file()
    status, outputs, _, _ = run_action(
        first, sdk=MUTANT, args="-k replay.", **{"known-failures": str(known)}
    )
    assert status == 0, outputs


def test_two_shards_merge_into_the_whole_run(tmp_path: Path) -> None:
    for shard in (1, 2):
        status, _, _, _ = run_action(
            tmp_path,
            sdk=PYTHON_HOST,
            args=f"-k timers --shard {shard}/2",
            **{"output-dir": f"shard-{shard}", "artifact-name": f"shard-{shard}"},
        )
        assert status == 0
    parts = [len(_testcases(tmp_path / f"shard-{n}" / "junit.xml")) for n in (1, 2)]
    merged = subprocess.run(
        [sys.executable, "-m", "fakepeer", "merge", "shard-1/report.json", "shard-2/report.json"]
        + ["--out", "merged.json", "--junit", "junit.xml", "--markdown", "summary.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.strip().splitlines()[-1] == f"{sum(parts)} passed, 0 failed"
    assert len(_testcases(tmp_path / "junit.xml")) == sum(parts)


def _workflows() -> list[dict]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


@pytest.mark.parametrize("index", range(3))
def test_docs_ci_workflows_parse_and_use_only_the_action_inputs(index: int) -> None:
    workflows = _workflows()
    assert len(workflows) == 3, "docs/ci.md: one job, sharded GitHub workflow, GitLab CI"
    workflow = workflows[index]
    if "jobs" in workflow:  # GitHub Actions
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if "ryusen-conform@" in step.get("uses", ""):
                    given = set(step.get("with", {}))
                    assert given <= set(ACTION["inputs"]), given - set(ACTION["inputs"])
                    assert "sdk" in given
    else:  # GitLab CI
        jobs = {k: v for k, v in workflow.items() if isinstance(v, dict) and "script" in v}
        assert any(job.get("parallel") for job in jobs.values())
        assert any("ryusen-conform merge" in " ".join(job["script"]) for job in jobs.values())
