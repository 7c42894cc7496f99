"""§11 one invocation: discovery, replay, duplicates, stopped passes, targeted execution."""

from __future__ import annotations

from typing import Any

import pytest
from ryusen_sdk import Instant, Registry, Retry, RyusenError, StepContext, Workflow
from ryusen_sdk.workflow import DecisionMachine, Source
from sdkpy_helpers import done, failed, run, target

CALLS: list[str] = []


def _cb(name: str, value: Any = None):
    def callback(step: StepContext) -> Any:
        CALLS.append(name)
        return value

    return callback


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def _registry() -> Registry:
    registry = Registry()

    @registry.function("two")
    def two(ctx: Workflow, input: Any) -> Any:
        a = ctx.step.run("a", _cb("a", "A"), compensate=lambda s, f: "undo:" + f)
        b = ctx.step.run("b", _cb("b", "B"), name="Bee", retry=Retry(5, "2s"))
        return [a, b]

    @registry.function("catches")
    def catches(ctx: Workflow, input: Any) -> Any:
        try:
            ctx.step.run("a", _cb("a"))
        except RyusenError as error:
            return {"caught": error.category, "retryable": error.retryable}
        return "no error"

    @registry.function("swallows")
    def swallows(ctx: Workflow, input: Any) -> Any:
        try:
            ctx.step.run("a", _cb("a"))
        except Exception:  # must not catch the suspension
            return "swallowed"
        return "returned"

    @registry.function("catch_base_then_more")
    def catch_base(ctx: Workflow, input: Any) -> Any:
        try:
            ctx.step.run("a", _cb("a"))
        except BaseException:  # noqa: BLE001 - a misbehaving workflow
            pass
        ctx.step.run("b", _cb("b"))
        return "returned"

    @registry.function("dup")
    def dup(ctx: Workflow, input: Any) -> Any:
        ctx.step.run("a", _cb("a"))
        ctx.step.run("a", _cb("a2"))

    @registry.function("kinds")
    def kinds(ctx: Workflow, input: Any) -> Any:
        ctx.sleep("nap", "1.5s")
        ctx.sleep_until("alarm", Instant(1767225600000))
        payload = ctx.wait_for_event("approval", "order.approved", {"order": "A-1"}, timeout="24h")
        child = ctx.invoke("child", "echo", {"x": 1})
        receipt = ctx.emit("announce", "order.shipped", payload)
        return [payload, child, receipt]

    @registry.function("raises")
    def raises(ctx: Workflow, input: Any) -> Any:
        raise ValueError("nope")

    @registry.function("unportable")
    def unportable(ctx: Workflow, input: Any) -> Any:
        return {1: 2}

    return registry


REG = _registry()


def test_discovery_declares_the_first_unresolved_step_and_runs_nothing() -> None:
    answer = run(REG, "two")
    assert answer.kind == "declared"
    assert answer.body["declaration"] == {
        "type": "step",
        "step_id": "a",
        "name": "a",
        "retry": {"max_attempts": 3, "backoff_ms": "1000"},
        "has_compensation": True,
    }
    assert CALLS == []


def test_replay_returns_recorded_values_without_callbacks() -> None:
    answer = run(REG, "two", history={"a": done("A!")})
    assert answer.body["declaration"]["step_id"] == "b"
    assert answer.body["declaration"]["name"] == "Bee"
    assert answer.body["declaration"]["retry"] == {"max_attempts": 5, "backoff_ms": "2000"}
    answer = run(REG, "two", history={"a": done("A!"), "b": done(2)})
    assert answer.kind == "completed"
    assert answer.body["value"] == {
        "t": "array",
        "v": [{"t": "str", "v": "A!"}, {"t": "i64", "v": "2"}],
    }
    assert CALLS == []


def test_replayed_failure_is_raised_unchanged_and_catchable() -> None:
    answer = run(REG, "catches", history={"a": failed("sdk.timeout", retryable=True)})
    assert answer.kind == "completed"
    assert answer.body["value"]["v"]["caught"] == {"t": "str", "v": "sdk.timeout"}
    assert answer.body["value"]["v"]["retryable"] == {"t": "bool", "v": True}


def test_uncaught_replayed_failure_is_failed_with_the_record() -> None:
    answer = run(REG, "two", history={"a": failed("payments.declined", "no")})
    assert answer.kind == "failed"
    assert answer.body["error"] == {
        "category": "payments.declined",
        "message": "no",
        "retryable": False,
        "details": {},
    }


def test_except_exception_never_catches_the_suspension() -> None:
    assert run(REG, "swallows").kind == "declared"


def test_stopped_pass_keeps_its_first_answer() -> None:
    answer = run(REG, "catch_base_then_more")
    assert answer.kind == "declared"
    assert answer.body["declaration"]["step_id"] == "a"


def test_duplicate_after_replay_is_blocked() -> None:
    answer = run(REG, "dup", history={"a": done(1)})
    assert answer.kind == "definition_blocked"
    assert answer.body["reason"] == "duplicate_step_id"
    assert answer.body["step_id"] == "a"
    assert answer.body["first_source"]["line"] >= 1


def test_duplicate_after_the_boundary_keeps_the_boundary() -> None:
    answer = run(REG, "dup")
    assert answer.kind == "declared"


def test_decision_machine_blocks_even_after_a_suspension() -> None:
    machine = DecisionMachine()
    assert machine.encounter("a", Source("f.py", 1)) is None
    blocked = machine.encounter("a", Source("f.py", 2))
    assert blocked is not None and blocked.kind == "definition_blocked"


def test_other_declarations() -> None:
    answer = run(REG, "kinds")
    assert answer.body["declaration"] == {"type": "timer", "step_id": "nap", "delay_ms": "1500"}
    history = {"nap": done(None)}
    answer = run(REG, "kinds", history=history)
    assert answer.body["declaration"] == {
        "type": "timer",
        "step_id": "alarm",
        "deadline_ms": "1767225600000",
    }
    history["alarm"] = done(None)
    answer = run(REG, "kinds", history=history)
    assert answer.body["declaration"] == {
        "type": "wait",
        "step_id": "approval",
        "event": "order.approved",
        "correlation": {"order": "A-1"},
        "timeout_ms": "86400000",
    }
    history["approval"] = done(b"{}")
    answer = run(REG, "kinds", history=history)
    assert answer.body["declaration"] == {
        "type": "invoke",
        "step_id": "child",
        "function_id": "echo",
        "input": {"t": "object", "v": {"x": {"t": "i64", "v": "1"}}},
    }
    history["child"] = done("hi")
    answer = run(REG, "kinds", history=history)
    assert answer.body["declaration"] == {
        "type": "emit",
        "step_id": "announce",
        "event": "order.shipped",
        "payload": {"t": "bytes", "v": "e30="},
        "metadata": {},
    }
    history["announce"] = done("evt-1")
    answer = run(REG, "kinds", history=history)
    assert answer.kind == "completed"


def test_foreign_exception_is_app_unhandled_and_retryable() -> None:
    answer = run(REG, "raises")
    assert answer.body["error"] == {
        "category": "app.unhandled",
        "message": "nope",
        "retryable": True,
        "details": {},
    }


def test_unportable_return_is_a_conversion_failure() -> None:
    answer = run(REG, "unportable")
    assert answer.kind == "failed"
    assert answer.body["error"]["category"] == "sdk.conversion"


def test_unknown_function() -> None:
    answer = run(REG, "nope")
    assert answer.kind == "protocol_error"
    assert answer.body["error"]["details"] == {"pointer": "/body/function_id"}
    answer = run(REG, "nope", mode="forward", target=target("a"))
    assert answer.kind == "rejected_before_start"
    assert answer.body["reason"]["code"] == "unknown_function"


# --- targeted forward (§11.3) ----------------------------------------------------------------


def test_forward_runs_only_the_target_callback_and_echoes_identity() -> None:
    answer = run(REG, "two", history={"a": done("A")}, mode="forward", target=target("b"))
    assert answer.kind == "step_completed"
    assert answer.body == {
        "operation_id": "op-7",
        "attempt": 2,
        "fencing_generation": "11",
        "value": {"t": "str", "v": "B"},
    }
    assert CALLS == ["b"]


def test_forward_target_with_history_is_still_executed() -> None:
    answer = run(REG, "two", history={"a": done("A")}, mode="forward", target=target("a"))
    assert answer.kind == "step_completed"
    assert CALLS == ["a"]


def test_forward_target_not_reached() -> None:
    answer = run(REG, "two", mode="forward", target=target("b"))
    assert answer.kind == "target_not_found"
    assert answer.body == {"run_id": "run-1", "step_id": "b", "phase": "forward"}
    answer = run(
        REG, "two", history={"a": done(1), "b": done(2)}, mode="forward", target=target("z")
    )
    assert answer.kind == "target_not_found"
    assert CALLS == []


def test_forward_callback_failure_is_step_failed() -> None:
    registry = Registry()

    @registry.function("f")
    def f(ctx: Workflow, input: Any) -> Any:
        def boom(step: StepContext) -> Any:
            raise RyusenError("payments.declined", "no", False, {"code": "51"})

        try:
            ctx.step.run("a", boom)
        except RyusenError:
            return "caught"  # never reached: the attempt failure is the answer

    answer = run(registry, "f", mode="forward", target=target("a"))
    assert answer.kind == "step_failed"
    assert answer.body["error"] == {
        "category": "payments.declined",
        "message": "no",
        "retryable": False,
        "details": {"code": "51"},
    }


def test_forward_target_that_is_not_a_step_is_rejected_before_start() -> None:
    answer = run(REG, "kinds", mode="forward", target=target("nap"))
    assert answer.kind == "rejected_before_start"
    assert answer.body == {
        "request_id": "req-1",
        "attempt": 2,
        "fencing_generation": "11",
        "reason": {
            "code": "unsupported_target",
            "message": answer.body["reason"]["message"],
            "retryable": False,
        },
    }


def test_admission_closed() -> None:
    answer = run(REG, "two", mode="forward", target=target("a"), admission_open=False)
    assert answer.kind == "rejected_before_start"
    assert answer.body["reason"]["code"] == "admission_refused"
    assert answer.body["reason"]["retryable"] is True
    assert CALLS == []


# --- targeted compensation (§11.4) -----------------------------------------------------------


def test_compensation_runs_the_current_compensator_with_the_recorded_value() -> None:
    answer = run(
        REG, "two", history={"a": done("A")}, mode="compensate", target=target("a", "compensation")
    )
    assert answer.kind == "compensation_completed"
    assert answer.body["value"] == {"t": "str", "v": "undo:A"}
    assert CALLS == []


@pytest.mark.parametrize(
    ("history", "step"),
    [
        ({"a": done("A"), "b": done("B")}, "b"),  # no compensator in current code
        ({}, "a"),  # no accepted forward result
        ({"a": failed("x.y")}, "a"),  # a failed step has no forward result
        ({"a": done("A")}, "z"),  # reaches unresolved b first
    ],
)
def test_compensation_target_not_found(history: dict, step: str) -> None:
    answer = run(
        REG, "two", history=history, mode="compensate", target=target(step, "compensation")
    )
    assert answer.kind == "target_not_found"
    assert answer.body["phase"] == "compensation"
    assert CALLS == []


def test_compensation_of_a_timer_is_unsupported() -> None:
    answer = run(
        REG,
        "kinds",
        history={"nap": done(None)},
        mode="compensate",
        target=target("nap", "compensation"),
    )
    assert answer.body["reason"]["code"] == "unsupported_target"


# --- declaration refusals ----------------------------------------------------------------------


def test_declaration_refusals_are_catchable_sdk_errors() -> None:
    registry = Registry()
    seen: list[str] = []

    @registry.function("f")
    def f(ctx: Workflow, input: Any) -> Any:
        for call in (
            lambda: ctx.emit("e1", "ev", {"not": "bytes"}),
            lambda: ctx.emit("e2", "ev", b"x", retry=Retry(2)),
            lambda: ctx.sleep("s1", "1d"),
            lambda: ctx.step.run("r1", _cb("r"), retry=Retry(0)),
            lambda: ctx.invoke("i1", "echo", float("nan")),
        ):
            try:
                call()
            except RyusenError as error:
                seen.append(error.category)
        ctx.step.run("e1", _cb("again"))  # the refused call still met its ID

    answer = run(registry, "f")
    assert seen == [
        "sdk.invalid_declaration",
        "sdk.invalid_declaration",
        "sdk.invalid_duration",
        "sdk.invalid_declaration",
        "sdk.conversion",
    ]
    assert answer.kind == "definition_blocked"
    assert answer.body["step_id"] == "e1"
