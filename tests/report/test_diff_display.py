"""How differences read (issue 15): bytes decoded next to their base64, long values elided around
the first difference, no key hidden, each difference naming its step, later steps marked as
possible consequences of the first failing one."""

from __future__ import annotations

import base64

import pytest

from fakepeer.compare import Finding, describe, diff_text, explain
from fakepeer.session import Outcome
from fakepeer.suite import RunOptions, run_suite
from tests.support.helpers import echo_scenario, invoke_body
from tests.support.mock_sdk import MockSdk


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_bytes_are_shown_as_utf8_text_next_to_their_base64() -> None:
    expected = '{"z":3,"é":4,"😀":2,"｡":1}'.encode()
    actual = '{"z":3,"é":4,"｡":1,"😀":2}'.encode()
    (finding,) = explain(
        {"body": {"value": {"t": "bytes", "v": _b64(expected)}}},
        {"body": {"value": {"t": "bytes", "v": _b64(actual)}}},
    )
    assert finding.pointer == "/body/value/v"
    assert finding.message.splitlines() == [
        "bytes differ:",
        'expected `{"z":3,"é":4,"😀":2,"｡":1}` (UTF-8)',
        '     got `{"z":3,"é":4,"｡":1,"😀":2}` (UTF-8)',
        f'expected base64 "{_b64(expected)}"',
        f'     got base64 "{_b64(actual)}"',
    ]
    assert finding.expected == _b64(expected), "the report keeps the raw values"


def test_bytes_that_are_not_utf8_are_shown_as_hex_and_controls_escaped() -> None:
    message = describe(_b64(b"\xff\x00\x01"), _b64(b"a\nb"), as_bytes=True)
    assert "expected ff 00 01 (hex)" in message
    assert "got `a\\nb` (UTF-8)" in message


def test_manifest_contents_are_bytes_too() -> None:
    (finding,) = explain({"body": {"contents": _b64(b"one")}}, {"body": {"contents": _b64(b"two")}})
    assert "expected `one` (UTF-8)" in finding.message


def test_a_string_that_is_not_at_a_bytes_position_is_not_decoded() -> None:
    (finding,) = explain({"v": _b64(b"one")}, {"v": _b64(b"two")})
    assert finding.message == f'expected "{_b64(b"one")}", got "{_b64(b"two")}"'


@pytest.mark.parametrize("at", [0, 150, 5_000, 9_999])
def test_long_values_are_elided_around_the_first_difference_never_before_it(at: int) -> None:
    expected = "a" * 10_000
    actual = expected[:at] + "B" + expected[at + 1 :]
    message = describe(expected, actual)
    lines = message.splitlines()
    assert lines[0] == "values differ:"
    shown_expected, shown_actual = lines[1], lines[2]
    assert "B" in shown_actual, "the first difference is shown"
    assert len(shown_actual) < 260
    # the same window of both: the difference sits in the same column
    column = shown_actual.index("B")
    assert shown_expected[column] == "a"
    if at > 100:
        assert "…[" in shown_expected and "…[" in shown_actual


def test_short_values_stay_on_one_line() -> None:
    assert describe("hi", "ho") == 'expected "hi", got "ho"'


@pytest.mark.parametrize("key", ["__proto__", "constructor", "", "__class__"])
def test_no_key_is_hidden_from_a_diff(key: str) -> None:
    findings = explain({"body": {}}, {"body": {key: 1}})
    assert [f.pointer for f in findings] == [f"/body/{key}"]
    findings = explain({"body": {key: 1}}, {"body": {key: 2}})
    assert [f.pointer for f in findings] == [f"/body/{key}"]
    assert findings[0].message == "expected 1, got 2"


def test_each_difference_names_its_step_and_later_steps_are_consequences() -> None:
    scenario = echo_scenario("wrong-value", fixture_id="t.two-steps")
    scenario.send("invoke", invoke_body("wrong-value", "again"))
    scenario.expect("completed", {"value": {"$plain": "again"}})
    run = run_suite([MockSdk().target()], [scenario.build()], RunOptions())
    (case,) = run.sdks[0].results
    assert case.outcome is Outcome.FAIL
    assert [(f.step, f.consequence) for f in case.findings] == [
        ("step 2, expect completed", False),
        ("step 4, expect completed", True),
    ]
    assert case.diff.splitlines() == [
        "step 2, expect completed:",
        '  [value] /body/value/v: expected "hi", got "surprise"',
        "step 4, expect completed (after the first failing step: may be a consequence):",
        '  [value] /body/value/v: expected "again", got "surprise"',
    ]


def test_findings_without_a_step_print_as_before() -> None:
    finding = Finding("value", "/a", "expected 1, got 2")
    assert diff_text([finding]) == "[value] /a: expected 1, got 2"
