"""Legal variations of the reference SDK pass the gate, warned only where their choice shows.

Issue 33: an SDK that makes one choice RFD 2 leaves open (a default display name or retry, the
category or pointer of a refusal no correct server provokes, the category of an author's mistake,
a JSON convenience spelling, an extra `app.unhandled` detail) must exit 0 over the whole corpus,
with warnings only in the parts about that choice. The other direction, that a real fault still
fails a required part, is the kill matrix's (`tests/mutants/kill_matrix.py`).
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import REPO

HOST = REPO / "tests" / "mutants" / "mutant_host.py"

#: variation -> (JSON pointer patterns a warning may be at, fixture-id patterns that may warn).
WHERE = {
    "variation.default-name": (
        ["/body/declaration/name"],
        ["discovery.default-name-and-retry*"],
    ),
    "variation.default-retry": (
        ["/body/declaration/retry*"],
        ["discovery.default-name-and-retry*"],
    ),
    "variation.refusal-category": (["/body/error/category"], ["*"]),
    "variation.refusal-pointer": (["/body/error/details/pointer"], ["*"]),
    "variation.author-mistake-category": (["*/category", "*/category/v", "/trace/*"], ["*"]),
    "variation.json-spelling": (["/body/value/v", "/body/value/*/v"], ["json.*"]),
    "variation.emit-json-spelling": (["/body/declaration/payload/v"], ["emission.json-document*"]),
    "variation.unhandled-detail": (["*/details/exception", "*/details/v/exception"], ["*"]),
}


def _variations() -> list[str]:
    sys.path.insert(0, str(HOST.parent))
    try:
        from variations import VARIATIONS
    finally:
        sys.path.remove(str(HOST.parent))
    return list(VARIATIONS)


def test_every_variation_is_checked() -> None:
    assert sorted(_variations()) == sorted(WHERE)


@pytest.mark.parametrize("name", sorted(WHERE))
def test_a_legal_variation_passes_with_warnings_only_about_its_choice(
    name: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "fakepeer", "run", "--sdk", f"{sys.executable} {HOST} {name}",
         "--jobs", "2", "--timeout", "20", "--report-json", str(report)],
        capture_output=True, text=True, cwd=REPO, timeout=1200, check=False,
    )  # fmt: skip
    document = json.loads(report.read_text())
    failing = [
        f"{case['id']}: {case['reason']}"
        for case in document["sdks"][0]["cases"]
        if case["fails_run"]
    ]
    assert result.returncode == 0 and not failing, (failing, result.stdout[-3000:])
    pointers, fixtures = WHERE[name]
    warned = [case for case in document["sdks"][0]["cases"] if case.get("warned")]
    assert warned, f"{name} makes its choice where no fixture looks: the test proves nothing"
    stray = [
        f"{case['id']} {finding['pointer']}"
        for case in warned
        for finding in case["diff"]
        if not any(fnmatch.fnmatchcase(case["id"], pattern) for pattern in fixtures)
        or not any(fnmatch.fnmatchcase(finding["pointer"], pattern) for pattern in pointers)
    ]
    assert not stray, stray
    assert document["summary"]["warnings"] == len(warned)
    last = result.stdout.rstrip().splitlines()[-1]
    print(f"{name}: {last}; warned: {len(warned)} fixture(s)")  # the figures (pytest -s)
    assert last.endswith(f"{len(warned)} warning" + ("s" if len(warned) != 1 else "")), last
