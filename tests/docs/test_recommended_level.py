"""A `recommended` case that differs is visible in every report, as a warning that is counted,
but does not fail the gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakepeer.cases import load_fixtures
from tests.support.helpers import TABLE_HOST, echo_scenario

REPO = Path(__file__).resolve().parents[2]


def test_recommended_failure_is_a_visible_warning_not_a_failed_gate(tmp_path: Path) -> None:
    corpus = tmp_path / "fixtures"
    echo_scenario("advice", level="recommended", expect_value="other").write(corpus)
    report = tmp_path / "report.json"
    run = subprocess.run(
        [sys.executable, "-m", "fakepeer", "run", "--sdk", f"{sys.executable} {TABLE_HOST}",
         "--no-default-fixtures", "--fixtures", str(corpus), "--timeout", "5",
         "--report-json", str(report)],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING t.advice" in run.stdout and "recommended" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1] == "1 passed, 0 failed, 1 warning"
    case = json.loads(report.read_text())["sdks"][0]["cases"][0]
    assert (case["level"], case["outcome"], case["fails_run"]) == ("recommended", "pass", False)
    assert case["warned"] and case["diff"][0]["level"] == "recommended"


def test_fixtures_on_contested_decisions_are_recommended() -> None:
    """Where docs/decisions.md says RFD 2 is silent or contradicts itself and the server could
    tolerate either answer, the case is advisory. (`emission.json-document-as-given` left this
    list: its member order is what "as given" fixes, D-EMIT-PAYLOAD; `manifest.timeout-negative-
    is-zero` left it when D-RUN-TIMEOUT-ZERO rested both zero and negative on the same-bytes
    sentence; the emission attempt counts RFD 2 does not refuse joined it, D-EMISSION-ATTEMPTS.)"""
    contested = {
        "forward.target-with-completed-history-executed",
        "forward.target-with-failed-history-executed",
        "emission.zero-attempts-refused",
        "emission.negative-attempts-refused",
    }
    levels = {f.id: f.level for f in load_fixtures() if f.id in contested}
    assert levels == dict.fromkeys(contested, "recommended")
