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
import shlex
import shutil
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
        if status and "always()" not in str(step.get("if", "")):
            continue  # after a failed step GitHub runs only `if: always()` steps
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
        status = status or done.returncode
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


def _yaml_blocks() -> list[dict]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def _workflows() -> list[dict]:
    """The whole workflows of docs/ci.md (a GitHub `jobs` or a GitLab `stages` document); a job
    to add to one (the fleet job) is checked on its own."""
    return [block for block in _yaml_blocks() if "jobs" in block or "stages" in block]


def test_the_fleet_job_runs_your_sdk_with_a_reference_sdk_as_a_fleet() -> None:
    (fragment,) = [
        block for block in _yaml_blocks() if "jobs" not in block and "stages" not in block
    ]
    (job,) = fragment.values()
    runs = " ".join(step.get("run", "") for step in job["steps"])
    assert runs.count("--sdk ") == 2 and "ryusen-conform/runners/" in runs
    assert "--variants fleet,rolling" in runs


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
                    assert "sdk" in given or "merge" in given
    else:  # GitLab CI
        jobs = {k: v for k, v in workflow.items() if isinstance(v, dict) and "script" in v}
        assert any(job.get("parallel") for job in jobs.values())
        assert any("ryusen-conform merge" in " ".join(job["script"]) for job in jobs.values())


# ----------------------------------------------------------------------------- issue 22: no recipe
# ends green by mistake. Each workflow of docs/ci.md is run step by step (matrix expanded, the
# artifacts handed from the shard jobs to the merge job) against a failing SDK and against a stale
# known-failures list; the last job of each must fail.

SELECTION = "-k replay."  # a small selection keeps the four shards quick
STALE = "values.does-not-exist  # renamed long ago\n"


def _github_workflow(
    workflow: dict, workspace: Path, sdk: str, known: Path | None
) -> dict[str, int]:
    """Run a docs/ci.md GitHub workflow's jobs in order; the status of each job's last step."""
    statuses: dict[str, int] = {}
    artifacts: dict[str, Path] = {}
    for name, job in workflow["jobs"].items():
        matrix = job.get("strategy", {}).get("matrix", {})
        values = [{"matrix.shard": str(v)} for v in matrix.get("shard", [])] or [{}]
        for context in values:
            for step in job["steps"]:
                uses = step.get("uses", "")
                if uses.startswith("actions/download-artifact"):
                    target = workspace / step["with"]["path"]
                    for artifact, folder in artifacts.items():
                        if re.fullmatch(step["with"]["pattern"].replace("*", ".*"), artifact):
                            shutil.copytree(folder, target / artifact, dirs_exist_ok=True)
                    continue
                if "ryusen-conform@" not in uses:
                    continue  # checkout, the SDK's own build
                given = {k: _evaluate(str(v), context) for k, v in step["with"].items()}
                if "sdk" in given:
                    given["sdk"] = sdk
                    given["args"] = f"{given.get('args', '')}\n{SELECTION}"
                if "known-failures" in given:
                    if known is None:
                        del given["known-failures"]
                    else:
                        given["known-failures"] = str(known)
                status, _, _, uses_steps = run_action(workspace, **given)
                statuses[name] = status
                upload = next(s for s in uses_steps if "upload-artifact" in s["uses"])
                artifacts[upload["name"]] = workspace / upload["path"]
    return statuses


def _gitlab_pipeline(workflow: dict, workspace: Path, sdk: str, known: Path | None) -> int:
    """Run the docs/ci.md GitLab jobs' scripts (pip lines skipped); the merge job's status."""
    status = 0
    replacement = f"--sdk {shlex.quote(sdk)} {SELECTION}"
    for job in workflow.values():
        if not isinstance(job, dict) or "script" not in job:
            continue
        for index in range(1, int(job.get("parallel", 1)) + 1):
            script = []
            for line in job["script"]:
                if "pip install" in line:
                    continue
                line = line.replace("--sdk ./conform", replacement)
                if known is None:
                    line = line.replace("--known-failures conformance/known-failures.txt", "")
                else:
                    line = line.replace("conformance/known-failures.txt", str(known))
                script.append(line.replace("ryusen-conform ", f"{sys.executable} -m fakepeer "))
            done = subprocess.run(
                ["bash", "-eo", "pipefail", "-c", "\n".join(script)],
                cwd=workspace,
                env=dict(
                    os.environ, CI_NODE_INDEX=str(index), CI_NODE_TOTAL=str(job.get("parallel", 1))
                ),
                capture_output=True,
                text=True,
                timeout=600,
            )
            status = done.returncode
    return status


def _cases() -> list:
    return [
        pytest.param(
            MUTANT.replace("replay-reruns-callback", "timer-value-dropped"), None, id="failing-sdk"
        ),
        pytest.param(PYTHON_HOST, STALE, id="stale-list"),
    ]


@pytest.mark.parametrize(("sdk", "stale"), _cases())
@pytest.mark.parametrize("index", range(3))
def test_no_docs_ci_recipe_ends_green_on_a_failing_sdk_or_a_stale_list(
    tmp_path: Path, index: int, sdk: str, stale: str | None
) -> None:
    workflow = _workflows()[index]
    known = None
    if stale is not None:
        known = tmp_path / "known-failures.txt"
        known.write_text(stale, encoding="utf-8")
    if "jobs" in workflow:
        statuses = _github_workflow(workflow, tmp_path, sdk, known)
        last_job = list(workflow["jobs"])[-1]
        assert statuses[last_job] != 0, statuses
    else:
        assert _gitlab_pipeline(workflow, tmp_path, sdk, known) != 0


def test_args_lines_are_split_like_a_shell_line(tmp_path: Path) -> None:
    status, outputs, summary, _ = run_action(
        tmp_path, sdk=PYTHON_HOST, args='-k "timers and not negative"\n--timeout 10'
    )
    assert status == 0, outputs
    assert "| timers |" in summary


def test_update_failures_in_args_puts_the_new_list_in_the_artifact(tmp_path: Path) -> None:
    known = tmp_path / "known.txt"
    known.write_text("# ours\n", encoding="utf-8")
    status, outputs, _, uses = run_action(
        tmp_path, sdk=MUTANT, args="-k replay.\n--update-failures", **{"known-failures": str(known)}
    )
    assert outputs["known-failures-updated"] == "true"
    artifact = next(step for step in uses if step["uses"].startswith("actions/upload-artifact"))
    uploaded = (tmp_path / artifact["path"] / "known-failures.txt").read_text(encoding="utf-8")
    assert uploaded.startswith("# ours\n") and "replay.callback-not-rerun" in uploaded


def test_the_documented_exit_codes_are_the_ones_the_cli_has() -> None:
    described = ACTION["outputs"]["exit-code"]["description"]
    for status in ("0", "1", "2", "3", "130"):
        assert status in described


def test_every_recipe_installs_one_version_and_gitlab_pins_the_current_release() -> None:
    """Issue 22 (4): shards and merge run the same bench. GitHub recipes use the action for both
    (its own copy); each GitLab job installs `$BENCH`, one variable pinned to this release (a
    stale pin such as 0.1.0 would run a bench that predates the merge checks)."""
    import fakepeer

    release = fakepeer.__version__.split(".dev")[0]
    for workflow in _workflows():
        if "jobs" in workflow:
            for job in workflow["jobs"].values():
                for step in job["steps"]:
                    assert "pip install" not in str(step.get("run", "")), step
            continue
        pin = workflow["variables"]["BENCH"]
        assert pin == f"ryusen-conform=={release}", pin
        for name, job in workflow.items():
            if isinstance(job, dict) and "script" in job:
                installs = [line for line in job["script"] if "pip install" in line]
                assert installs == ['python -m pip install "$BENCH"'], (name, installs)
