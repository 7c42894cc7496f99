"""The cross-SDK tally (categories x SDKs) in every format, the HTML report; two in-memory SDKs.

SDK `sdk-a` offers every capability and answers like the mock SDK; `sdk-b` lacks `timers` (so
the timers case is skipped) and gets `t.diverge` wrong, so the two columns differ.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from rich.console import Console

from fakepeer.cases import Scenario
from fakepeer.report import (
    RunInfo,
    build_tally,
    catalog_from_fixtures,
    merge_documents,
    print_run,
    to_document,
    to_html,
    to_junit,
    to_markdown,
    write_document,
)
from fakepeer.report.document import selection_of
from fakepeer.session.outcomes import summary_line
from fakepeer.session.wire import REPORTED_PAYLOAD_BYTES, WireRecord
from fakepeer.suite import RunOptions, run_suite
from tests.support.helpers import echo_scenario, invoke_body
from tests.support.html_check import check_html
from tests.support.mock_sdk import MockSdk

SCRIPT = "<script>alert('pwned')</script>"


class DivergentSdk(MockSdk):
    """The mock SDK, except that it answers `t.diverge` with the wrong value."""

    def _invoke(self, transport, body, reply):
        if body["run_id"] == "diverge":
            return reply("completed", {"value": {"t": "str", "v": "diverged"}})
        return super()._invoke(transport, body, reply)


def script_scenario() -> Scenario:
    """Sends a `<script>` payload and expects something else, so the diff and wire log hold it."""
    scenario = Scenario(
        "t.script",
        f"Markup in a payload {SCRIPT} stays text",
        section="tests",
        quote=f"A quote with {SCRIPT} in it",
        protocol="§3",
        category="values",
    )
    body = invoke_body("script")
    body["input"] = {"$plain": SCRIPT}
    scenario.send("invoke", body)
    scenario.expect("completed", {"value": {"$plain": "safe"}})
    return scenario


def corpus() -> list:
    scenarios = [
        echo_scenario("ok"),
        echo_scenario("echo"),
        echo_scenario("diverge"),
        echo_scenario("wrong-value", category="values"),
        echo_scenario("crash", category="errors"),
        echo_scenario("caps", category="timers", capabilities=("timers",)),
        echo_scenario("warn", category="values", level="recommended", expect_value="nope"),
        script_scenario(),
    ]
    return [scenario.build() for scenario in scenarios]


@pytest.fixture(scope="module")
def fixtures() -> list:
    return corpus()


@pytest.fixture(scope="module")
def two_sdks(fixtures):
    targets = [
        MockSdk().target("sdk-a"),
        DivergentSdk(capabilities=["compensation"]).target("sdk-b"),
    ]
    result = run_suite(targets, fixtures, RunOptions())
    lone = next(case for case in result.sdks[0].results if case.id == "t.ok")
    lone.wire.append(WireRecord("received", 0.1, b'{"kind":"x","s":"\\udc00 \\u0000"}'))
    huge = next(case for case in result.sdks[1].results if case.id == "t.ok")
    big = b'{"kind":"big","s":"' + b"y" * (REPORTED_PAYLOAD_BYTES + 10) + b'"}'
    huge.wire.append(WireRecord("sent", 0.2, big))
    return result


@pytest.fixture(scope="module")
def info(fixtures) -> RunInfo:
    return RunInfo(timeout=5.0, catalog=catalog_from_fixtures(fixtures))


def _outcomes(run, label: str) -> dict[str, str]:
    sdk = next(sdk for sdk in run.sdks if sdk.label == label)
    return {case.id: case.outcome.value for case in sdk.results}


def test_the_two_sdks_differ_as_intended(two_sdks) -> None:
    a, b = _outcomes(two_sdks, "sdk-a"), _outcomes(two_sdks, "sdk-b")
    assert a["t.diverge"] == "pass" and b["t.diverge"] == "fail"
    assert a["t.caps"] == "pass" and b["t.caps"] == "skip"
    assert a["t.crash"] == b["t.crash"] == "error"
    assert a["t.script"] == "fail"


# ----------------------------------------------------------------------------- the tally model


def test_tally_cells(two_sdks) -> None:
    tally = build_tally(two_sdks)
    assert tally.sdks == ("sdk-a", "sdk-b")
    assert tally.categories == ("discovery", "errors", "timers", "values")
    assert tally.cell("discovery", "sdk-a").text == "3/3"
    assert tally.cell("discovery", "sdk-a").status == "pass"
    assert tally.cell("discovery", "sdk-b").text == "2/3 1 fail"
    assert tally.cell("discovery", "sdk-b").status == "fail"
    assert tally.cell("timers", "sdk-b").text == "0/1 1 skip"
    assert tally.cell("timers", "sdk-b").status == "skip"
    assert tally.cell("errors", "sdk-a").text == "0/1 1 error"
    # t.warn differs only at a recommended level: a pass, counted again as a warning
    assert tally.totals["sdk-a"].text == "5/8 2 fail 1 error 1 warn"
    assert tally.totals["sdk-b"].text == "3/8 3 fail 1 error 1 skip 1 warn"


def test_recommended_failures_alone_make_a_warning_cell() -> None:
    fixtures = [echo_scenario("warn", level="recommended", expect_value="nope").build()]
    run = run_suite([MockSdk().target("a"), MockSdk().target("b")], fixtures, RunOptions())
    assert build_tally(run).cell("discovery", "a").status == "warn"
    run.strict = True
    assert build_tally(run).cell("discovery", "a").status == "fail"


# ----------------------------------------------------------------------------- console


def _console_text(run, **options) -> str:
    console = Console(record=True, width=160, highlight=False, file=io.StringIO(), **options)
    print_run(console, run)
    return console.export_text(styles=bool(options.get("color_system")))


def _tally_rows(text: str) -> dict[str, list[str]]:
    """The categories x SDKs table, after its title: first column -> the other cells."""
    table = text.split("categories x SDKs", 1)[1]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in re.split(r"[│┃]", line)]
        if len(cells) == 3 and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


def test_console_prints_one_tally_after_the_sdk_details(two_sdks) -> None:
    text = _console_text(two_sdks, color_system=None)
    assert text.index("SDK sdk-a") < text.index("SDK sdk-b") < text.index("categories x SDKs")
    assert text.index("ERROR t.crash", text.index("SDK sdk-b")) < text.index("categories x SDKs")
    rows = _tally_rows(text)
    assert rows["category"] == ["sdk-a", "sdk-b"]
    assert rows["discovery"] == ["3/3", "2/3 1 fail"]
    assert rows["timers"] == ["1/1", "0/1 1 skip"]
    assert rows["values"] == ["1/3 2 fail 1 warn", "1/3 2 fail 1 warn"]
    assert rows["total"] == ["5/8 2 fail 1 error 1 warn", "3/8 3 fail 1 error 1 skip 1 warn"]


def test_console_tally_cells_are_coloured(two_sdks) -> None:
    text = _console_text(two_sdks, color_system="standard", force_terminal=True)
    tally = text.split("categories x SDKs", 1)[1]
    assert re.search(r"\x1b\[32m3/3\x1b\[0m", tally)  # all pass: green
    assert re.search(r"\x1b\[1;31m2/3 1 fail\x1b\[0m", tally)  # failing: bold red
    assert re.search(r"\x1b\[36m0/1 1 skip\x1b\[0m", tally)  # skipped: cyan


def test_console_with_one_sdk_has_no_tally(fixtures) -> None:
    run = run_suite([MockSdk().target("only")], fixtures, RunOptions())
    assert "categories x SDKs" not in _console_text(run, color_system=None)


def test_the_summary_line_sums_every_sdk(two_sdks) -> None:
    assert summary_line(two_sdks.counts()) == "8 passed, 5 failed, 2 errors, 1 skipped"
    assert two_sdks.summary() == "8 passed, 5 failed, 2 errors, 1 skipped, 2 warnings"


# ----------------------------------------------------------------------------- JSON


def _schema() -> dict:
    text = resources.files("fakepeer.report").joinpath("report.schema.json").read_text()
    return json.loads(text)


def _validate(document: dict) -> None:
    errors = list(Draft202012Validator(_schema()).iter_errors(json.loads(json.dumps(document))))
    assert errors == [], [error.message for error in errors]


def test_json_tally_validates_and_counts(two_sdks, info) -> None:
    document = to_document(two_sdks, info)
    _validate(document)
    matrix = document["matrix"]
    assert matrix["sdks"] == ["sdk-a", "sdk-b"]
    assert matrix["categories"] == ["discovery", "errors", "timers", "values"]
    discovery = matrix["rows"][0]
    assert discovery["category"] == "discovery"
    assert discovery["cells"][1] == {
        "sdk": "sdk-b",
        "pass": 2,
        "fail": 1,
        "error": 0,
        "skip": 0,
        "xfail": 0,
        "xpass": 0,
        "total": 3,
        "fails_run": 1,
        "warnings": 0,
    }
    assert [total["total"] for total in matrix["totals"]] == [8, 8]
    assert document["summary"]["total"] == 16  # the old fields stay


def test_json_cases_name_their_rule(two_sdks, info) -> None:
    document = to_document(two_sdks, info)
    case = next(c for c in document["sdks"][0]["cases"] if c["id"] == "t.script")
    assert case["title"].startswith("Markup in a payload")
    assert case["rule"] == {
        "section": "tests",
        "quote": f"A quote with {SCRIPT} in it",
        "protocol": "§3",
    }


def test_reports_without_a_tally_still_validate(two_sdks) -> None:
    document = to_document(two_sdks)
    del document["matrix"]
    _validate(document)


def _shard_documents(tmp_path: Path, fixtures, info) -> list[Path]:
    """A two-SDK run split in two shards by fixture, each written as its own report."""
    ordered = sorted(fixtures, key=lambda fixture: fixture.id)
    paths = []
    for number, part in enumerate((ordered[::2], ordered[1::2]), 1):
        targets = [MockSdk().target("sdk-a"), DivergentSdk(["compensation"]).target("sdk-b")]
        run = run_suite(targets, part, RunOptions())
        path = tmp_path / f"shard{number}.json"
        selection = selection_of(fixture.id for fixture in ordered)
        info_of_shard = RunInfo(shard=f"{number}/2", catalog=info.catalog, selection=selection)
        write_document(to_document(run, info_of_shard), path)
        paths.append(path)
    return paths


def test_merge_of_multi_sdk_shards_rebuilds_the_tally(tmp_path: Path, fixtures, info) -> None:
    merged = merge_documents(_shard_documents(tmp_path, fixtures, info))
    whole = run_suite(
        [MockSdk().target("sdk-a"), DivergentSdk(["compensation"]).target("sdk-b")],
        fixtures,
        RunOptions(),
    )
    assert [sdk.label for sdk in merged.run.sdks] == ["sdk-a", "sdk-b"]
    assert build_tally(merged.run).to_json() == build_tally(whole).to_json()
    assert merged.catalog == info.catalog
    document = to_document(merged.run, RunInfo(catalog=merged.catalog))
    _validate(document)
    assert all("title" in case for sdk in document["sdks"] for case in sdk["cases"])


# ----------------------------------------------------------------------------- JUnit, Markdown


def test_junit_has_one_suite_per_sdk(two_sdks) -> None:
    root = ET.fromstring(ET.tostring(to_junit(to_document(two_sdks)).getroot()))
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["sdk-a", "sdk-b"]
    a, b = suites
    assert (a.get("tests"), a.get("failures"), a.get("errors"), a.get("skipped")) == (
        "8",
        "2",
        "1",
        "0",
    )
    assert (b.get("tests"), b.get("failures"), b.get("errors"), b.get("skipped")) == (
        "8",
        "3",
        "1",
        "1",
    )
    properties = {p.get("name"): p.get("value") for p in b.find("properties")}
    assert properties["category.discovery"] == "2/3 1 fail"
    assert properties["capabilities"] == "compensation"
    assert root.get("tests") == "16"


def test_markdown_has_the_tally_and_failures_per_sdk(two_sdks) -> None:
    text = to_markdown(to_document(two_sdks))
    assert "| category | `sdk-a` | `sdk-b` |" in text
    assert "| discovery | ✅ 3/3 | ❌ 2/3 1 fail |" in text
    assert "| timers | ✅ 1/1 | ⏭️ 0/1 1 skip |" in text
    section_b = text.split("## SDK `sdk-b`", 1)[1]
    assert "<code>t.diverge</code>" in section_b
    assert "<code>t.diverge</code>" not in text.split("## SDK `sdk-b`", 1)[0]
    assert text.rstrip().endswith(
        "**8 passed, 5 failed, 2 errors, 1 skipped, 2 warnings** (exit status 1)"
    )


# ----------------------------------------------------------------------------- HTML


@pytest.fixture(scope="module")
def page_text(two_sdks, info) -> str:
    return to_html(to_document(two_sdks, info))


def test_html_is_well_formed_and_self_contained(page_text) -> None:
    page = check_html(page_text)
    assert page.problems == []
    assert page.tags["script"] == 1 and page.tags["style"] == 1
    assert page.resource_attributes == []
    assert not {"link", "img", "iframe", "object", "embed"} & set(page.tags)
    assert all(href.startswith("#") for href in page.links)
    assert "url(" not in page_text and "@import" not in page_text


def test_html_has_every_case_of_every_sdk(two_sdks, page_text) -> None:
    page = check_html(page_text)
    for index, sdk in enumerate(two_sdks.sdks):
        for case in sdk.results:
            assert f"case-{index}-{case.id}" in page.details
    assert len(page.details) == 16
    assert page_text.count('<tr class="all-pass">') + page_text.count('<tr class="problem">') == 8


def test_every_failing_cell_links_to_an_existing_anchor(page_text) -> None:
    page = check_html(page_text)
    failing = [link for link in page.cell_links if "s-fail" in link.cell_class.split()]
    assert len(failing) > 9  # the grid's failing cells, plus the summary's failing categories
    for link in page.cell_links:
        assert link.href and link.href.startswith("#")
        assert page.ids[link.href[1:]] == 1, link.href
    for href in page.links:
        assert page.ids[href[1:]] == 1 or href[1:] in {"sdks", "summary", "grid", "cases"}
    diverged = page.details["case-1-t.diverge"]
    assert "s-fail" in diverged.split()
    assert "s-pass" in page.details["case-0-t.diverge"].split()


def test_html_case_details(page_text) -> None:
    start = page_text.index('id="case-1-t.diverge"')
    section = page_text[start : page_text.index("</details>", start)]
    assert "table host run diverge" in section  # the title
    assert "An invocation contains the run input" in section  # the rule quote
    assert "<dt>level</dt><dd>required</dd>" in section
    assert "/body/value/v" in section and '"diverged"' in section  # the diff
    assert "Wire log" in section and "bench → SDK" in section and "SDK → bench" in section
    crash = page_text[page_text.index('id="case-0-t.crash"') :]
    assert "mock: crashing" in crash[: crash.index("</details>")]


def test_html_escapes_markup_from_payloads_and_fixtures(page_text) -> None:
    assert SCRIPT not in page_text
    assert "<script>alert" not in page_text
    assert "&lt;script&gt;alert('pwned')&lt;/script&gt;" in page_text
    page = check_html(page_text)
    assert all("pwned" not in script for script in page.scripts)
    assert page.text.count(SCRIPT) >= 6  # shown as text: title, quote, diff, wire log


def test_html_survives_lone_surrogates_controls_and_huge_payloads(two_sdks, info, tmp_path) -> None:
    path = tmp_path / "report.html"
    path.write_text(to_html(to_document(two_sdks, info)), encoding="utf-8")
    text = path.read_bytes().decode("utf-8")  # strict: the file is valid UTF-8
    assert "\\udc00 \\u0000" in text
    assert "\x00" not in text
    assert "truncated" in text and "y" * 1000 in text and "y" * 2048 not in text
    assert check_html(text).problems == []
    assert path.stat().st_size < 500_000
