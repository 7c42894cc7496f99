"""Issue 10 problems 1 and 8: every case has exactly one result, a bench failure is an internal
error (exit 3, never green), and what a result keeps is bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakepeer.report import RunInfo, to_document
from fakepeer.session import EXIT_INTERNAL
from fakepeer.session.results import REPORTED_VALUE_CHARS
from fakepeer.session.wire import REPORTED_PAYLOAD_BYTES
from fakepeer.suite import RunOptions, known_failures, run_suite
from fakepeer.transport import MockTransport, json_handler
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk

RUN_IDS = ["a", "b", "boom", "c", "d"]


def _raising_validator(envelope: dict) -> list:
    """A validator that hits the recursion limit on one answer, as the bench once did."""
    if envelope.get("body", {}).get("value") == {"t": "str", "v": "boom-value"}:
        raise RecursionError("maximum recursion depth exceeded")
    return []


def _fixtures() -> list:
    fixtures = []
    for run_id in RUN_IDS:
        scenario = echo_scenario(run_id)
        if run_id == "boom":
            scenario = echo_scenario(run_id, expect_value="boom-value")
        fixtures.append(scenario.build())
    return fixtures


class _BoomSdk(MockSdk):
    def _invoke(self, transport, body, reply):  # type: ignore[override]
        if body["run_id"] == "boom":
            return reply("completed", {"value": {"t": "str", "v": "boom-value"}})
        return super()._invoke(transport, body, reply)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bench_failure_on_a_case_is_its_internal_error_and_the_run_is_not_green(
    jobs: int,
) -> None:
    options = RunOptions(jobs=jobs, validator=_raising_validator)
    result = run_suite([_BoomSdk().target()], _fixtures(), options)
    (sdk,) = result.sdks
    assert [case.id for case in sdk.results] == [f"t.{run_id}" for run_id in RUN_IDS]
    broken = {case.id: case for case in sdk.results if case.raw_outcome.value != "pass"}
    assert list(broken) == ["t.boom"]
    assert broken["t.boom"].internal is True
    assert broken["t.boom"].reason.startswith("internal error: the bench failed on this case")
    assert "RecursionError" in broken["t.boom"].reason
    assert result.exit_status() == EXIT_INTERNAL
    document = to_document(result, RunInfo())
    assert document["exit_status"] == EXIT_INTERNAL
    case = next(c for c in document["sdks"][0]["cases"] if c["id"] == "t.boom")
    assert case["internal"] is True


def test_a_known_failure_does_not_hide_an_internal_error() -> None:
    target = _BoomSdk().target()
    result = run_suite([target], _fixtures(), RunOptions(validator=_raising_validator))
    known_failures.apply(
        result,
        known_failures.KnownFailures(
            {known_failures.EVERY_SDK: known_failures.KnownList(Path("k.txt"), {"t.boom": ""})}
        ),
    )
    assert result.exit_status() == EXIT_INTERNAL


HUGE = 15_900_000


def _huge_answers(envelope: dict) -> list[bytes]:
    kind, ident = envelope["kind"], envelope["id"]
    if kind == "invoke":  # a legal frame, every time: a 15.9 MB string value
        text = "x" * HUGE
        return [json.dumps({"version": "1.0", "kind": "completed", "id": ident,
                            "body": {"value": {"t": "str", "v": text}}}).encode()]  # fmt: skip
    return [json.dumps(answer).encode() for answer in MockSdk()._answer(_NoStderr(), envelope)]


class _NoStderr(MockTransport):
    def __init__(self) -> None:
        super().__init__(lambda payload: [])


def test_huge_answers_keep_only_bounded_evidence() -> None:
    """Issue 10 problem 8: a 15.9 MiB answer cost about 70 MB per case in the result."""
    fixtures = [echo_scenario(f"h{n}").build() for n in range(3)]
    target = MockSdk().target()
    target.factory = lambda: MockTransport(json_handler(lambda e: _raw(e)))
    result = run_suite([target], fixtures, RunOptions())
    for case in result.sdks[0].results:
        assert case.raw_outcome.value == "fail", case.reason
        for record in case.wire:
            assert len(record.payload) <= REPORTED_PAYLOAD_BYTES
        for finding in case.findings:
            for value in (finding.expected, finding.actual):
                assert len(json.dumps(value, default=str)) <= REPORTED_VALUE_CHARS + 2000
        received = [r.to_json() for r in case.wire if r.direction == "received"]
        assert any(r.get("truncated") and r["size"] > HUGE for r in received), "the answer's trace"


def _raw(envelope: dict) -> list:
    return [json.loads(payload) if len(payload) < 1000 else payload
            for payload in _huge_answers(envelope)]  # fmt: skip


def test_passing_cases_keep_no_wire_log_and_failing_ones_do() -> None:
    fixtures = [echo_scenario(run_id).build() for run_id in ("p1", "p2", "wrong-value")]
    result = run_suite([MockSdk().target()], fixtures, RunOptions())
    cases = {case.id: case for case in result.sdks[0].results}
    assert cases["t.p1"].wire == [] and cases["t.p2"].wire == []
    assert cases["t.wrong-value"].wire, "a failing case keeps its wire log"
