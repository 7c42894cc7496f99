"""The replay budget, restarts and repeated declarations on the in-process scripted host: the
long-run figures of D-REPLAY-BUDGET, and the rules the lifecycle scenarios show with an SDK."""

from __future__ import annotations

import time

import pytest

from fakepeer.protocol.limits import MAX_HISTORY_ENTRIES
from fakepeer.server.loop import ModelServer
from fakepeer.server.policy import ServerPolicy
from fakepeer.server.script import Fault, ScriptItem

from .fakes import FakeLink, steps_then_complete

NULL = {"t": "null"}


def test_a_run_past_the_history_limit_ends_failed_at_the_limit() -> None:
    """1,030 steps against the §4.3 bound: 1,024 complete, the 1,025th declaration is refused
    before it commits, and the run unwinds every completed step and fails (D-REPLAY-BUDGET)."""
    steps = [f"s{index:04d}" for index in range(1030)]
    link = FakeLink(steps_then_complete(*steps))
    started = time.perf_counter()
    report = ModelServer(link).simulate("f", NULL)
    seconds = time.perf_counter() - started
    root = report.root
    assert len(root.history) == MAX_HISTORY_ENTRIES
    assert "s1024" not in root.declarations  # refused before it commits
    assert root.status == "failed"
    assert root.error["category"] == "server.replay_budget"
    assert (
        root.error["message"] == "step s1024 would be history entry 1025; the replay budget is 1024"
    )
    assert max(len(body["history"]) for body in link.sent) == MAX_HISTORY_ENTRIES
    # every completed step got a compensation target, newest first; the scripted host answers
    # compensation_completed (an SDK answers target_not_found for a step without compensator)
    assert root.compensated == list(reversed(steps[:MAX_HISTORY_ENTRIES]))
    assert report.invocations == 2 * 1024 + 1 + 1024
    print(f"1,030-step run: {report.invocations} invocations in {seconds:.2f} s")


def test_a_run_that_fills_the_budget_exactly_completes() -> None:
    steps = [f"s{index}" for index in range(3)]
    report = ModelServer(
        FakeLink(steps_then_complete(*steps)), policy=ServerPolicy(history_limit=3)
    ).simulate("f", NULL)
    assert report.root.status == "completed"
    assert len(report.root.history) == 3


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"history_limit": 1025}, "history_limit must be an integer from 0 to 1024"),
        ({"default_timeout_ms": -1}, "default_timeout_ms must be a non-negative integer"),
        ({"history": 3}, "unknown policy member 'history'"),
    ],
)
def test_a_bad_policy_is_one_line(document: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServerPolicy.from_json(document)


def test_a_server_restart_keeps_the_next_attempts_instant() -> None:
    """A retry due at 1000 ms stays due at 1000 ms across a restart at 500 ms, and the
    rediscovered step (a repeated declaration) is not dispatched a second time."""
    times: list[int] = []

    def answer(body: dict) -> tuple[str, dict]:
        if body["mode"] == "forward":
            times.append(body["target"]["attempt"])
        return steps_then_complete("a")(body)

    server = ModelServer(FakeLink(answer))
    failing = Fault("lost_answer", "forward", "a", 1)
    report = server.simulate("f", NULL, [ScriptItem(500, "server_restart")], [failing])
    lines = report.timeline.invocation_lines()
    assert lines == [
        "@0 main discover -> declared step a",
        "@0 main forward a #1 -> (none) (answer lost)",
        "@500 main discover -> declared step a",
        "@1000 main forward a #2 -> step_completed",
        "@1000 main discover -> completed",
    ]
    assert times == [1, 2]


def test_a_redelivered_forward_answer_is_stale() -> None:
    link = FakeLink(steps_then_complete("a"))
    report = ModelServer(link).simulate("f", NULL, [], [Fault("redeliver", "forward", "a")])
    assert report.timeline.invocation_lines()[2] == (
        "@0 main forward a #1 -> step_completed (redelivered; stale answer ignored)"
    )
    assert report.root.completion_order == ["a"]  # settled once
    assert report.root.status == "completed"


def _program(*declarations: dict) -> object:
    """Declare each in order until its step is in the history, then complete."""

    def answer(body: dict) -> tuple[str, dict]:
        if body["mode"] != "discover":
            return steps_then_complete()(body)
        done = {entry["step_id"] for entry in body["history"]}
        for declaration in declarations:
            if declaration["step_id"] not in done:
                return "declared", {"declaration": declaration}
        return "completed", {"value": NULL}

    return answer


TIMER = {"type": "timer", "step_id": "t", "delay_ms": "1500"}


def test_a_repeated_timer_declaration_keeps_the_recorded_anchor() -> None:
    link = FakeLink(_program(TIMER))
    rediscover = Fault("rediscover", "discover", "t", after_ms=500)
    report = ModelServer(link).simulate("f", NULL, [], [rediscover])
    assert report.timeline.invocation_lines() == [
        "@0 main discover -> declared timer t",
        "@500 main discover -> declared timer t",
        "@1500 main discover -> completed",
    ]


def test_a_server_restart_keeps_durable_instants_and_rediscovers() -> None:
    wait = {
        "type": "wait",
        "step_id": "w",
        "event": "e",
        "correlation": {},
        "timeout_ms": "3000",
    }
    report = ModelServer(FakeLink(_program(TIMER, wait))).simulate(
        "f", NULL, [ScriptItem(700, "server_restart"), ScriptItem(2000, "server_restart")]
    )
    assert report.timeline.invocation_lines() == [
        "@0 main discover -> declared timer t",
        "@700 main discover -> declared timer t",
        "@1500 main discover -> declared wait w",
        "@2000 main discover -> declared wait w",
        "@4500 main discover -> completed",
    ]
    assert report.root.history["w"]["error"]["category"] == "sdk.timeout"


def test_a_disagreeing_declaration_is_refused_and_the_run_goes_on() -> None:
    first = {"type": "invoke", "step_id": "c", "function_id": "f", "input": NULL}
    other = {**first, "input": {"t": "str", "v": "other"}}
    sent = []

    def answer(body: dict) -> tuple[str, dict]:
        if body["run_id"] != "run-1":
            return "completed", {"value": body["input"]}
        sent.append(body)
        if any(entry["step_id"] == "c" for entry in body["history"]):
            return "completed", {"value": NULL}
        return "declared", {"declaration": first if len(sent) == 1 else other}

    report = ModelServer(FakeLink(answer)).simulate(
        "f", NULL, [], [Fault("rediscover", "discover", "c")]
    )
    assert report.root.status == "completed"
    assert report.root.declarations["c"] == first  # the recorded one stands
    assert report.root.history["c"]["value"] == NULL  # the recorded child's input came back
    assert len(report.runs) == 2
    assert any(
        "disagrees with the recorded one: refused" in e.text for e in report.timeline.entries
    )


def test_a_redeclared_obsolete_step_is_a_new_operation() -> None:
    """D-ATTEMPT-IDENTITY: no (operation id, attempt) pair names two physical attempts."""
    targets: list[tuple[str, int]] = []

    def answer(body: dict) -> tuple[str, dict]:
        if body["mode"] == "forward":
            target = body["target"]
            targets.append((target["operation_id"], target["attempt"]))
            if len(targets) == 1:
                return "target_not_found", {"step_id": "a"}
        return steps_then_complete("a")(body)

    report = ModelServer(FakeLink(answer)).simulate("f", NULL)
    assert report.root.status == "completed"
    assert targets[0] == ("op:run-1:forward:a", 1)
    assert targets[1][1] == 1 and targets[1][0].startswith("op-")
    assert len(set(targets)) == len(targets)


def test_policy_maximum_rejects_activation_and_no_run_starts() -> None:
    link = FakeLink(steps_then_complete("a"), functions=[{"id": "f", "timeout": "1h"}])
    report = ModelServer(link, policy=ServerPolicy(max_timeout_ms=3_599_999)).simulate("f", NULL)
    assert report.root.status == "error"
    assert report.root.error["category"] == "server.manifest_rejected"
    assert link.sent == []
    link = FakeLink(steps_then_complete("a"), functions=[{"id": "f", "timeout": "1h"}])
    report = ModelServer(link, policy=ServerPolicy(max_timeout_ms=3_600_000)).simulate("f", NULL)
    assert report.root.status == "completed"  # equal is not above


def test_a_child_is_bounded_by_each_of_its_three_bounds() -> None:
    def answer_with(timeout: str | None) -> object:
        """f invokes g once; g completes (a g invoking g again would nest children until the
        server's invocation bound: 100,000 runs, gigabytes of aliases, for one child checked)."""
        invoke = {"type": "invoke", "step_id": "c", "function_id": "g", "input": NULL}
        if timeout is not None:
            invoke["timeout_ms"] = timeout
        parent, child = _program(invoke), _program()
        return lambda body: (child if body["function_id"] == "g" else parent)(body)

    functions = [{"id": "f"}, {"id": "g", "timeout_ms": "60000"}]
    cases = [("120000", None, "function", 60000), ("30000", None, "invoke", 30000)]
    cases.append(("120000", 10000, "parent", 10000))
    for timeout, default, source, due in cases:
        link = FakeLink(answer_with(timeout), functions=functions)
        server = ModelServer(link, policy=ServerPolicy(default_timeout_ms=default))
        report = server.simulate("f", NULL)
        child = next(run for run in report.runs.values() if run.parent is not None)
        assert (child.deadline_source, child.deadline_ms - child.created_ms) == (source, due)
