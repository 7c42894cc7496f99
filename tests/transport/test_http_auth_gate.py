"""No HTTP run is green with authentication unchecked (D-HTTP-AUTH, issue 35): over HTTP a case
that needs `request_authentication` fails on an endpoint that does not announce it; on the
framed transport, which signs nothing, it is skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakepeer.session.case import unchecked_authentication

ROOT = Path(__file__).resolve().parents[2]
PYTHON_SDK = ROOT / "runners/python/conform"
CASES = "http.unsigned-request-refused or http.admission-closed-is-an-envelope"


def _run(sdk: str, tmp_path: Path) -> tuple[int, dict[str, dict]]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "fakepeer", "run", "--sdk", sdk, "-k", CASES, "--out", str(report)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    (run,) = json.loads(report.read_text(encoding="utf-8"))["sdks"]
    return done.returncode, {case["id"]: case for case in run["cases"]}


def test_an_http_endpoint_without_authentication_fails_the_authentication_cases(
    tmp_path: Path,
) -> None:
    status, cases = _run(
        f"http+cmd:env -u RYUSEN_CONFORM_HTTP_SECRET {PYTHON_SDK} --http", tmp_path
    )
    assert status == 1
    unsigned = cases["http.unsigned-request-refused"]
    assert unsigned["outcome"] == "fail"
    assert "without request_authentication" in unsigned["reason"]
    assert cases["http.admission-closed-is-an-envelope"]["outcome"] == "pass"


def test_the_same_endpoint_with_authentication_passes_both(tmp_path: Path) -> None:
    status, cases = _run(f"http+cmd:{PYTHON_SDK} --http", tmp_path)
    assert status == 0
    assert {case["outcome"] for case in cases.values()} == {"pass"}


def test_only_a_missing_authentication_over_http_fails() -> None:
    http = frozenset({"http"})
    assert unchecked_authentication(http, ["request_authentication"])
    assert not unchecked_authentication(frozenset(), ["request_authentication"])  # framed
    assert not unchecked_authentication(http, ["request_authentication", "timers"])
    assert not unchecked_authentication(http, ["timers"])
