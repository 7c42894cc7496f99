"""Reports: the JSON document and its schema, JUnit XML, Markdown, console tables, merge."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from rich.console import Console

from fakepeer.report import (
    ReportError,
    RunInfo,
    merge_documents,
    print_run,
    run_from_document,
    to_document,
    to_junit,
    to_markdown,
    write_document,
)
from fakepeer.report.document import selection_of
from fakepeer.session.wire import REPORTED_PAYLOAD_BYTES, WireRecord
from fakepeer.suite import RunOptions, known_failures, run_suite
from fakepeer.suite.known_failures import KnownList
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk


@pytest.fixture(scope="module")
def run_result():
    fixtures = [
        echo_scenario(run_id).build() for run_id in ("ok", "wrong-value", "crash", "garbage")
    ]
    fixtures.append(echo_scenario("caps", capabilities=("event_waits",)).build())
    fixtures.append(echo_scenario("warn", level="recommended", expect_value="nope").build())
    run = run_suite([MockSdk().target("mock-sdk")], fixtures, RunOptions())
    known_failures.apply(
        run, known_failures.KnownFailures({"": KnownList(Path("k"), {"t.garbage": ""})})
    )
    return run


def _schema() -> dict:
    text = resources.files("fakepeer.report").joinpath("report.schema.json").read_text()
    return json.loads(text)


def test_json_report_matches_its_schema(run_result) -> None:
    document = to_document(run_result, RunInfo(shard="1/2", timeout=5.0))
    Draft202012Validator.check_schema(_schema())
    errors = list(Draft202012Validator(_schema()).iter_errors(json.loads(json.dumps(document))))
    assert errors == []
    assert document["summary"] == {
        "pass": 2,  # t.warn: its recommended expectation differs, a pass with a warning
        "fail": 1,
        "error": 1,
        "skip": 1,
        "xfail": 1,
        "xpass": 0,
        "total": 6,
        "warnings": 1,
    }
    assert document["exit_status"] == 1


def test_json_report_case_records(run_result) -> None:
    document = to_document(run_result)
    cases = {case["id"]: case for case in document["sdks"][0]["cases"]}
    failing = cases["t.wrong-value"]
    assert failing["outcome"] == "fail" and failing["fails_run"]
    assert failing["diff"][0] == {
        "kind": "value",
        "pointer": "/body/value/v",
        "message": 'expected "hi", got "surprise"',
        "expected": "hi",
        "actual": "surprise",
        "step": "step 2, expect completed",
    }
    assert [frame["direction"] for frame in failing["wire"]][-1] == "received"
    assert "mock: crashing" in cases["t.crash"]["stderr_tail"]
    assert cases["t.garbage"]["outcome"] == "xfail" and cases["t.garbage"]["raw_outcome"] == "error"
    assert any(frame.get("text") == "not json" for frame in cases["t.garbage"]["wire"])
    assert cases["t.warn"]["fails_run"] is False
    assert cases["t.warn"]["outcome"] == "pass" and cases["t.warn"]["warned"] is True
    assert cases["t.warn"]["diff"][0]["level"] == "recommended"
    assert cases["t.warn"]["wire"], "a pass with warnings keeps its wire log"


def test_document_round_trip(run_result) -> None:
    rebuilt = run_from_document(json.loads(json.dumps(to_document(run_result))))
    assert to_document(rebuilt)["sdks"] == to_document(run_result)["sdks"]


def test_junit_xml(run_result) -> None:
    root = ET.fromstring(ET.tostring(to_junit(to_document(run_result)).getroot()))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "6",
        "1",
        "1",
        "2",
    )
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert cases["t.wrong-value"].find("failure").get("type") == "fail"
    assert cases["t.warn"].find("failure") is None
    assert cases["t.warn"].find("system-out").text.startswith("warning: ")
    assert cases["t.crash"].find("error") is not None
    assert "known failure" in cases["t.garbage"].find("skipped").get("message")
    assert cases["t.ok"].find("failure") is None


def test_markdown(run_result) -> None:
    text = to_markdown(to_document(run_result))
    assert "## SDK `mock-sdk`" in text
    assert "| discovery | 2 | 1 | 1 | 1 | 1 | 0 |" in text
    assert "### Failing cases and warnings" in text
    assert "1 warning** (exit status 1)" in text
    assert "<code>t.wrong-value</code>" in text and "warning" in text
    assert "exit status 1" in text


def test_console_tables_and_details(run_result) -> None:
    console = Console(record=True, width=120, color_system=None)
    print_run(console, run_result)
    text = console.export_text()
    assert "SDK mock-sdk" in text
    assert "FAIL t.wrong-value" in text
    assert "WARNING t.warn" in text
    assert "ERROR t.crash" in text and "| mock: crashing" in text
    assert '/body/value/v: expected "hi", got "surprise"' in text


def _shard_report(
    tmp_path: Path, name: str, run_ids: list[str], whole: list[str] | None = None
) -> Path:
    fixtures = [echo_scenario(run_id).build() for run_id in run_ids]
    result = run_suite([MockSdk().target("mock-sdk")], fixtures, RunOptions())
    path = tmp_path / name
    selection = selection_of(f"t.{run_id}" for run_id in whole or run_ids)
    write_document(to_document(result, RunInfo(shard=name, selection=selection)), path)
    return path


def test_merge_combines_shards(tmp_path: Path) -> None:
    whole = ["ok", "wrong-value", "echo"]
    first = _shard_report(tmp_path, "1.json", ["ok", "wrong-value"], whole)
    second = _shard_report(tmp_path, "2.json", ["echo"], whole)
    merged = merge_documents([second, first]).run
    assert [case.id for case in merged.sdks[0].results] == ["t.echo", "t.ok", "t.wrong-value"]
    assert merged.exit_status() == 1


def test_merge_refuses_overlap_and_garbage(tmp_path: Path) -> None:
    first = _shard_report(tmp_path, "1.json", ["ok"])
    with pytest.raises(ReportError, match="also in an earlier report"):
        merge_documents([first, first])
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ReportError, match="not a ryusen-conform"):
        merge_documents([bad])


def test_large_payloads_are_truncated_in_the_wire_log() -> None:
    record = WireRecord("sent", 0.5, b"x" * (REPORTED_PAYLOAD_BYTES + 1)).to_json()
    assert record["truncated"] is True and record["size"] == REPORTED_PAYLOAD_BYTES + 1
    assert len(record["text"]) == 1024 and len(record["sha256"]) == 64
    small = WireRecord("received", 0.5, b'{"a":1}').to_json()
    assert small == {"direction": "received", "at": 0.5, "size": 7, "json": {"a": 1}}
    assert WireRecord("sent", 0, b"\xff").to_json()["base64"] == "/w=="


def test_reports_survive_lone_surrogates(tmp_path: Path) -> None:
    sdk = MockSdk()
    fixture = echo_scenario("lone").build()
    result = run_suite([sdk.target()], [fixture], RunOptions())
    result.sdks[0].results[0].wire.append(WireRecord("received", 0.1, b'{"s":"\\udc00"}'))
    path = tmp_path / "r.json"
    write_document(to_document(result), path)
    assert "\\udc00" in path.read_text()
    ET.fromstring(ET.tostring(to_junit(to_document(result)).getroot()))
