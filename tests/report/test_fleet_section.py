"""The fleet section of the JSON, JUnit and HTML reports and the console: a pair's cases side by
side by scenario, from the results alone (so `merge`, which rebuilds the run from its shards,
keeps it)."""

from __future__ import annotations

from fakepeer.report.document import to_document
from fakepeer.report.fleet import fleet_lines
from fakepeer.report.htmlreport import to_html
from fakepeer.report.junit import to_junit
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun


def _case(ident: str, outcome: Outcome) -> CaseResult:
    category = "@" + ident.rpartition("@")[2] if "@" in ident else "@fleet"
    return CaseResult(ident, category, "required", outcome, outcome)


def _run() -> RunResult:
    alone = SdkRun(label="runners/python/conform", command=["p"])
    alone.results.append(_case("lifecycle.a", Outcome.PASS))
    pair = SdkRun(label="python+node (fleet)", command=["p", "n"])
    pair.results += [
        _case("fleet.publication", Outcome.PASS),
        _case("lifecycle.a@fleet", Outcome.FAIL),
        _case("lifecycle.a@rolling", Outcome.PASS),
        _case("lifecycle.b@fleet", Outcome.SKIP),
        _case("lifecycle.b@rolling", Outcome.SKIP),
    ]
    return RunResult(sdks=[alone, pair])


def test_the_json_report_has_a_fleet_section_by_scenario() -> None:
    section = to_document(_run())["fleet"]
    assert section == [
        {
            "label": "python+node (fleet)",
            "pair": ["python", "node"],
            "publication": "pass",
            "scenarios": {
                "lifecycle.a": {"fleet": "fail", "rolling": "pass"},
                "lifecycle.b": {"fleet": "skip", "rolling": "skip"},
            },
        }
    ]


def test_the_console_names_each_scenario_a_fleet_variant_fails() -> None:
    assert fleet_lines(_run()) == [
        "fleet python+node: publication pass; 1/2 scenarios pass (or skip) as every fleet variant",
        "  lifecycle.a: @fleet fail, @rolling pass",
    ]


def test_a_run_without_a_pair_has_an_empty_fleet_section() -> None:
    run = RunResult(sdks=[SdkRun(label="x", command=["x"])])
    assert to_document(run)["fleet"] == [] and fleet_lines(run) == []


def test_junit_carries_the_section_on_the_pairs_suite() -> None:
    tree = to_junit(to_document(_run()))
    suites = {suite.get("name"): suite for suite in tree.getroot().iter("testsuite")}
    facts = {
        prop.get("name"): prop.get("value")
        for prop in suites["python+node (fleet)"].iter("property")
    }
    assert facts["fleet"].startswith("fleet python+node: publication pass; 1/2 scenarios")
    assert facts["fleet.lifecycle.a"] == "@fleet fail, @rolling pass"
    assert "fleet.lifecycle.b" not in facts
    alone = {p.get("name") for p in suites["runners/python/conform"].iter("property")}
    assert not any(name.startswith("fleet") for name in alone)


def test_the_html_page_shows_each_pair_by_scenario_and_variant() -> None:
    page = to_html(to_document(_run()))
    assert "fleet python+node: publication pass; 1/2 scenarios" in page
    assert "<th>@fleet</th><th>@rolling</th>" in page
    assert "<tr><td><code>lifecycle.a</code></td><td>fail</td><td>pass</td></tr>" in page
    alone = RunResult(sdks=[SdkRun(label="x", command=["x"])])
    assert 'class="fleet"' not in to_html(to_document(alone))
