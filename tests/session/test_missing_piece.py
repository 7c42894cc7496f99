"""Upgrade without the cascade: a host that lacks a piece of the host contract (the trace, a
control message) gets one grouped finding naming it and the file and section to read, with how
many of its cases answered as expected and which also differ; those cases still do not pass."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.helpers import HOSTS, REPO, run_cli

OLDER = f"{sys.executable} {HOSTS / 'older_host.py'}"
BASE = "discovery.boundary-after-replayed-steps"
PLAIN = ["discovery.boundary-hides-later-raise", "discovery.boundary-hides-later-return"]


def _corpus(tmp_path: Path) -> Path:
    """Three real fixtures, and one whose expectation the reference host does not meet."""
    folder = tmp_path / "fixtures"
    (folder / "discovery").mkdir(parents=True)
    for ident in [BASE, *PLAIN]:
        source = REPO / "fixtures" / "discovery" / f"{ident}.json"
        (folder / "discovery" / source.name).write_text(source.read_text())
    document = json.loads((folder / "discovery" / f"{BASE}.json").read_text())
    document["id"] = "discovery.answer-differs-too"
    document["steps"][-1]["expect"]["body"]["declaration"]["name"] = "not-c"
    (folder / "discovery" / "discovery.answer-differs-too.json").write_text(json.dumps(document))
    return folder


def test_a_host_without_conform_trace_gets_one_grouped_finding(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli(
        "run", "--sdk", OLDER, "--no-default-fixtures", "--fixtures", str(_corpus(tmp_path)),
        "--report-json", str(report), "--markdown", str(tmp_path / "r.md"),
    )  # fmt: skip
    assert result.returncode == 1
    out = result.stdout
    missing = [line for line in out.splitlines() if line.startswith("MISSING")]
    assert missing == [
        "MISSING the host lacks conform.trace (read docs/host-contract.md §12.4): 4 case(s) "
        "needed it and do not pass; 3 of them answered as expected, 1 also differ in their "
        "answers: discovery.answer-differs-too"
    ]
    # the case that also differs is shown with its diff; the three others are not repeated
    assert "discovery.answer-differs-too" in out.split(missing[0])[1]
    assert "not-c" in out
    assert out.count("does not implement conform.trace") == 1
    assert out.strip().splitlines()[-1] == "0 passed, 0 failed, 4 errors"
    document = json.loads(report.read_text())
    (sdk,) = document["sdks"]
    assert sdk["missing_pieces"] == [
        {
            "piece": "conform.trace",
            "section": "§12.4",
            "file": "docs/host-contract.md",
            "cases": 4,
            "answered_as_expected": 3,
            "also_differ": ["discovery.answer-differs-too"],
        }
    ]
    assert {case["missing"] for case in sdk["cases"]} == {"conform.trace"}
    assert all(case["outcome"] == "error" for case in sdk["cases"])
    markdown = (tmp_path / "r.md").read_text()
    assert (
        "**Missing:** the host lacks `conform.trace` (read docs/host-contract.md §12.4)" in markdown
    )


def test_a_missing_control_message_is_named_too(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli(
        "run", "--sdk", f"{OLDER} conform.publish", "-k", "manifest.activation",
        "--report-json", str(report),
    )  # fmt: skip
    assert result.returncode == 1
    (sdk,) = json.loads(report.read_text())["sdks"]
    (piece,) = sdk["missing_pieces"]
    assert piece["piece"] == "conform.publish"
    assert piece["file"] == "docs/host-contract.md" and piece["section"].startswith("§12")
    assert piece["cases"] >= 2
    assert "MISSING the host lacks conform.publish (read docs/host-contract.md §12" in result.stdout


def test_pointers_to_host_contract_sections_name_its_file() -> None:
    """§12-§13 live in docs/host-contract.md: no text may send a reader to docs/protocol.md."""
    import re

    wrong = re.compile(r"(docs/protocol\.md|protocol) §1[23]\b")
    places = [*(REPO / "fakepeer").rglob("*.py"), *(REPO / "fakepeer").rglob("*.json")]
    places += [*(REPO / "docs").glob("*.md")]
    found = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in places
        for match in wrong.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not found, found
