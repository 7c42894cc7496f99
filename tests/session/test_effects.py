"""The effect trace (protocol §12.4): invariants on every invoke, fixture traces, absent support."""

from __future__ import annotations

import pytest

from fakepeer.cases import FixtureError, Scenario
from fakepeer.cases.model import ExpectedTrace
from fakepeer.compare import Comparer
from fakepeer.session import Outcome, SdkSession, run_case
from fakepeer.session.effects import (
    INVARIANTS,
    TraceProblem,
    check_expected_trace,
    check_invariants,
    trace_events,
)
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk

TARGET = {
    "run_id": "r",
    "step_id": "b",
    "phase": "forward",
    "attempt": 2,
    "operation_id": "op-b",
    "fencing_generation": "1",
}
HISTORY = [{"step_id": "a", "status": "completed", "value": {"t": "null"}}]


def _invoke(mode: str, target: dict | None = None, history: list | None = None) -> dict:
    body: dict = {"run_id": "r", "function_id": "conform.program", "mode": mode}
    body["input"] = {"t": "null"}
    body["history"] = HISTORY if history is None else history
    if target is not None:
        body["target"] = target
    return {"version": "1.0", "kind": "invoke", "id": "c#1", "body": body}


def _started(step_id: str, phase: str = "forward", op: str = "op-b", attempt: int = 2) -> dict:
    return {
        "event": "started",
        "step_id": step_id,
        "phase": phase,
        "operation_id": op,
        "attempt": attempt,
    }


def _names(findings) -> list[str]:
    return [f.message.split(":", 1)[0] for f in findings]


ANSWER = {"kind": "step_completed"}
COMPENSATION = dict(TARGET, phase="compensation", step_id="a")


@pytest.mark.parametrize(
    ("invoke", "answer", "events", "broken"),
    [
        (_invoke("discover"), {"kind": "declared"}, [_started("b")], "discovery-runs-no-callback"),
        (
            _invoke("discover"),
            {"kind": "declared"},
            [_started("a")],
            "replayed-step-runs-no-callback",
        ),
        (
            _invoke("forward", TARGET),
            ANSWER,
            [_started("a"), _started("b")],
            "replayed-step-runs-no-callback",
        ),
        (_invoke("forward", TARGET), ANSWER, [_started("c")], "only-the-target-runs"),
        (
            _invoke("forward", TARGET),
            ANSWER,
            [_started("b"), _started("b")],
            "target-runs-at-most-once",
        ),
        (
            _invoke("forward", TARGET),
            ANSWER,
            [_started("b", op="op-x")],
            "identity-passed-unchanged",
        ),
        (
            _invoke("forward", TARGET),
            ANSWER,
            [_started("b", attempt=1)],
            "identity-passed-unchanged",
        ),
        (
            _invoke("compensate", dict(COMPENSATION, step_id="b"), []),
            {"kind": "compensation_completed"},
            [_started("b", "compensation")],
            "compensator-needs-forward-result",
        ),
        (
            _invoke("compensate", COMPENSATION),
            {"kind": "compensation_completed"},
            [_started("a", "forward")],
            "replayed-step-runs-no-callback",
        ),
        (
            _invoke("forward", TARGET),
            {"kind": "rejected_before_start"},
            [_started("b")],
            "rejected-only-before-start",
        ),
        (
            _invoke("discover"),
            {"kind": "declared"},
            [{"event": "caught", "by": "catch", "what": "suspension"}],
            "catch-never-catches-suspension",
        ),
        (
            _invoke("nonsense"),
            {"kind": "protocol_error"},
            [_started("b")],
            "refused-invoke-runs-nothing",
        ),
        (_invoke("forward", TARGET), ANSWER, [], "targeted-answer-ran-the-callback"),
        (
            _invoke("forward", TARGET),
            {"kind": "step_failed"},
            [],
            "targeted-answer-ran-the-callback",
        ),
        (
            _invoke("forward", TARGET),
            ANSWER,
            [_started("b", "compensation")],
            "targeted-answer-ran-the-callback",
        ),
        (
            _invoke("compensate", COMPENSATION),
            {"kind": "compensation_completed"},
            [],
            "compensation-answer-ran-the-compensator",
        ),
        (
            _invoke("compensate", COMPENSATION),
            {"kind": "compensation_failed"},
            [],
            "compensation-answer-ran-the-compensator",
        ),
    ],
)
def test_each_invariant_fails_on_its_fault(invoke, answer, events, broken) -> None:
    findings, checks = check_invariants(invoke, answer, events)
    assert broken in _names(findings)
    assert checks >= 1
    assert all("(RFD 2: \u201c" in f.message for f in findings)  # names the sentence enforced


@pytest.mark.parametrize(
    ("invoke", "answer", "events"),
    [
        (_invoke("discover"), {"kind": "declared"}, []),
        (
            _invoke("discover"),
            {"kind": "declared"},
            [{"event": "caught", "by": "catch_all", "what": "suspension"}],
        ),
        (_invoke("forward", TARGET), ANSWER, [_started("b")]),
        (_invoke("forward", dict(TARGET, step_id="a")), ANSWER, [_started("a")]),
        (
            _invoke("compensate", COMPENSATION),
            {"kind": "compensation_completed"},
            [_started("a", "compensation")],
        ),
        (_invoke("forward", TARGET), {"kind": "target_not_found"}, []),
        (_invoke("forward", TARGET), {"kind": "rejected_before_start"}, []),
        (_invoke("forward", TARGET), {"kind": "definition_blocked"}, []),
        (_invoke("compensate", COMPENSATION), {"kind": "target_not_found"}, []),
    ],
)
def test_a_faithful_trace_breaks_no_invariant(invoke, answer, events) -> None:
    findings, _ = check_invariants(invoke, answer, events)
    assert findings == []


def test_every_invariant_quotes_rfd_2_word_for_word() -> None:
    from fakepeer.cases.loader import repository_root

    rfd = (repository_root() / "docs" / "rfd-2-execution-protocol.txt").read_text(encoding="utf-8")
    for invariant in INVARIANTS:
        assert invariant.quote in rfd, invariant.name


def test_trace_answers_are_checked_strictly() -> None:
    assert trace_events({"kind": "conform.trace", "body": {"events": []}}) == []
    with pytest.raises(TraceProblem, match="does not implement conform.trace"):
        trace_events({"kind": "protocol_error", "body": {}})
    with pytest.raises(TraceProblem, match="malformed"):
        trace_events({"kind": "conform.trace", "body": {"events": [{"event": "started"}]}})
    with pytest.raises(TraceProblem, match="malformed"):
        trace_events({"kind": "conform.trace", "body": {}})


def test_expected_trace_exact_members_and_only() -> None:
    recorded = [_started("b"), {"event": "caught", "by": "catch_all", "what": "suspension"}]
    assert check_expected_trace(ExpectedTrace(tuple(recorded)), recorded) == []
    exact = ExpectedTrace((_started("b", attempt=3), recorded[1]))
    assert [f.pointer for f in check_expected_trace(exact, recorded)] == ["/trace/0"]
    members = ExpectedTrace(({"step_id": "b"}, {"what": "suspension"}), "members")
    assert check_expected_trace(members, recorded) == []
    only = ExpectedTrace(({"step_id": "b"},), "members", ("started",))
    assert check_expected_trace(only, recorded) == []
    too_few = ExpectedTrace(({"step_id": "b"},), "members")
    assert "expected 1 trace event(s), the host recorded 2" in str(
        check_expected_trace(too_few, recorded)[0]
    )


def test_a_host_without_conform_trace_makes_invoke_cases_errors_that_say_why() -> None:
    sdk = MockSdk()
    sdk.traces = False
    session = SdkSession(sdk.factory)
    fixture = echo_scenario("ok").build()
    result = run_case(session, fixture, timeout=5.0, comparer=Comparer())
    assert result.outcome is Outcome.ERROR
    assert "does not implement conform.trace" in result.reason
    assert "§12.4" in result.reason
    again = run_case(
        session, echo_scenario("ok", fixture_id="t.b").build(), timeout=5.0, comparer=Comparer()
    )
    assert again.outcome is Outcome.ERROR  # the session stays usable; every such case says so
    assert sdk.starts == 1


def test_a_case_without_an_invoke_needs_no_trace() -> None:
    sdk = MockSdk()
    sdk.traces = False
    scenario = Scenario("t.reset", "reset only", section="x", quote="y", category="discovery")
    scenario.send("conform.reset", {}).expect("conform.ack", {})
    result = run_case(SdkSession(sdk.factory), scenario.build(), timeout=5.0, comparer=Comparer())
    assert result.outcome is Outcome.PASS


def test_a_trace_expectation_belongs_on_an_invoke_answer() -> None:
    scenario = Scenario("t.bad", "misplaced", section="x", quote="y", category="discovery")
    scenario.send("conform.reset", {}).expect("conform.ack", {}, trace=[])
    with pytest.raises(FixtureError, match="a trace belongs on the answer to an invoke"):
        scenario.build()


def test_the_case_fails_when_the_trace_differs_from_the_fixture() -> None:
    sdk = MockSdk()
    scenario = echo_scenario("ok")
    scenario.document["steps"][-1]["trace"] = {"events": [_started("b")]}
    result = run_case(SdkSession(sdk.factory), scenario.build(), timeout=5.0, comparer=Comparer())
    assert result.outcome is Outcome.FAIL
    assert [f.kind for f in result.findings] == ["trace"]


class _TracingMock(MockSdk):
    """A mock host whose every invoke records a `caught` event; `keeps`: its conform.reset
    leaves the trace in place (the fault `after_reset` is there to show)."""

    def __init__(self, keeps: bool) -> None:
        super().__init__()
        self.keeps = keeps
        self.events: list[dict] = []

    def _answer(self, transport, envelope: dict) -> list[dict]:  # noqa: ANN001 - the mock's
        kind = envelope["kind"]
        if kind == "invoke":
            self.events.append({"event": "caught", "by": "catch", "what": "error", "category": "x"})
        elif kind == "conform.reset" and not self.keeps:
            self.events = []
        elif kind == "conform.trace":
            self.received.append(envelope)
            events, self.events = self.events, []
            return [
                {"version": "1.0", "kind": kind, "id": envelope["id"], "body": {"events": events}}
            ]
        return super()._answer(transport, envelope)


def _after_reset_scenario() -> Scenario:
    scenario = echo_scenario("ok")
    scenario.document["steps"][-1]["trace"] = {"after_reset": True, "events": []}
    return scenario


@pytest.mark.parametrize(("keeps", "outcome"), [(False, Outcome.PASS), (True, Outcome.FAIL)])
def test_a_trace_asked_after_reset_shows_a_trace_the_reset_left(keeps, outcome) -> None:
    sdk = _TracingMock(keeps)
    session = SdkSession(sdk.factory)
    result = run_case(session, _after_reset_scenario().build(), timeout=5.0, comparer=Comparer())
    assert result.outcome is outcome
    if keeps:
        assert [f.kind for f in result.findings] == ["trace"]
    kinds = [e["kind"] for e in sdk.received if e["kind"] != "register_ack"]
    # the case's own reset, the invoke, then a reset between its answer and its trace
    assert kinds[-4:] == ["conform.reset", "invoke", "conform.reset", "conform.trace"]


def test_after_reset_holds_no_event_and_answers_a_discovery() -> None:
    scenario = echo_scenario("ok")
    scenario.document["steps"][-1]["trace"] = {"after_reset": True, "events": [_started("b")]}
    with pytest.raises(FixtureError, match="events must be"):
        scenario.build()
    scenario = echo_scenario("ok")
    scenario.document["steps"][0]["send"]["body"].update(mode="forward", target=TARGET)
    scenario.document["steps"][-1]["trace"] = {"after_reset": True, "events": []}
    with pytest.raises(FixtureError, match="after_reset goes on the answer to a discover"):
        scenario.build()
