"""The bench against both reference SDKs over the whole corpus: this is how CI runs the bench.

It runs the real command line, `ryusen-conform run --variants all --sdk runners/python/conform
--sdk runners/node/conform`, and requires both SDKs to pass every fixture and every derived
variant of it (`FIXTURE@VARIANT`, fakepeer.cases.variants), in a new seeded random order each time
(`--shuffle`: a case must not need a neighbour; a failure's output names the seed that replays
it). It never skips: a machine
without the JavaScript SDK's dependencies fails with the command that installs them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fakepeer.cases import default_fixture_dir, load_fixtures
from fakepeer.cases.variants import VARIANTS, with_variants

ROOT = Path(__file__).resolve().parent.parent
SDKS = ["runners/python/conform", "runners/node/conform"]
INSTALL = "npm ci --prefix runners/node"


def _require_node() -> None:
    """Fail, never skip, when the JavaScript SDK cannot start."""
    assert shutil.which("node"), f"node is not on PATH: install Node.js 20, then run `{INSTALL}`"
    node_modules = ROOT / "runners" / "node" / "node_modules"
    assert node_modules.is_dir(), (
        f"{node_modules} is missing: run `{INSTALL}` from the repository root first"
    )


def test_both_reference_sdks_pass_the_whole_corpus(tmp_path: Path) -> None:
    _require_node()
    report, html = tmp_path / "report.json", tmp_path / "report.html"
    command = [sys.executable, "-m", "fakepeer", "run"]  # the same program as `ryusen-conform`
    for sdk in SDKS:
        command += ["--sdk", sdk]
    command += ["--variants", "all", "--report-json", str(report), "--html", str(html)]
    command += ["--shuffle"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    output = result.stdout[-20_000:] + result.stderr[-5_000:]
    assert result.returncode == 0, output

    fixtures = load_fixtures([default_fixture_dir()])
    corpus = len(with_variants(fixtures, VARIANTS))
    assert corpus > 4 * len(fixtures)  # each fixture in several variants, reported one by one
    document = json.loads(report.read_text(encoding="utf-8"))
    # the two SDKs, then the pair serving every lifecycle scenario as a fleet (@fleet, @rolling)
    assert [sdk["label"] for sdk in document["sdks"]] == [*SDKS, "python+node (fleet)"]
    assert isinstance(document["order"]["shuffle_seed"], int), document["order"]
    assert f"--shuffle {document['order']['shuffle_seed']}" in result.stdout
    scenarios = sum(1 for fixture in fixtures if fixture.lifecycle is not None)
    for sdk, cases in zip(document["sdks"], [corpus, corpus, 1 + 2 * scenarios], strict=True):
        summary = sdk["summary"]
        assert (summary["fail"], summary["error"]) == (0, 0), (sdk["label"], summary)
        assert summary["total"] == len(sdk["cases"]) == cases, (sdk["label"], summary)
    assert all(total["fails_run"] == 0 for total in document["matrix"]["totals"])
    categories = {row["category"] for row in document["matrix"]["rows"]}
    assert {f"@{name}" for name in VARIANTS} <= categories  # variants counted separately
    last = result.stdout.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(r"\d+ passed, 0 failed(, \d+ skipped)?", last), last
    text = html.read_text(encoding="utf-8")
    assert text.count('<details class="case ') == 2 * corpus + 1 + 2 * scenarios


HTTP_SDKS = [f"http+cmd:{sdk} --http" for sdk in SDKS]


def test_both_reference_sdks_pass_the_whole_corpus_over_http(tmp_path: Path) -> None:
    """The same corpus over the second transport (docs/protocol.md §1.1), with every derived
    variant as on stdio: every fixture runs, the HTTP-only ones included, none is skipped, a
    faulted send keeps its fault in each variant (an unsigned copy is still refused), and both
    SDKs pass all of them. One run covers the fixtures as written and their variants."""
    _require_node()
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "fakepeer", "run"]
    for sdk in HTTP_SDKS:
        command += ["--sdk", sdk]
    command += ["--variants", "all", "--report-json", str(report)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    output = result.stdout[-20_000:] + result.stderr[-5_000:]
    assert result.returncode == 0, output

    fixtures = load_fixtures([default_fixture_dir()])
    corpus = len(with_variants(fixtures, VARIANTS))
    document = json.loads(report.read_text(encoding="utf-8"))
    singles = [sdk for sdk in document["sdks"] if sdk["label"] in HTTP_SDKS]
    assert [sdk["label"] for sdk in singles] == HTTP_SDKS
    for sdk in singles:
        summary = sdk["summary"]
        assert summary["pass"] == summary["total"] == corpus, (sdk["label"], summary)
        http_cases = [case for case in sdk["cases"] if case["category"] == "http"]
        assert http_cases and all(case["outcome"] == "pass" for case in http_cases)
        faulted = {case["id"] for case in sdk["cases"] if case["id"].startswith("http.")}
        assert "http.unsigned-request-refused@respelled" in faulted  # variants of faulted sends
    # a pair of SDKs also serves the lifecycle scenarios as a fleet (@fleet, @rolling)
    total = sum(sdk["summary"]["total"] for sdk in document["sdks"])
    assert all(sdk["summary"]["pass"] == sdk["summary"]["total"] for sdk in document["sdks"])
    last = result.stdout.rstrip("\n").splitlines()[-1]
    assert last == f"{total} passed, 0 failed", last
