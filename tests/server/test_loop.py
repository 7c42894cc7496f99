"""The run loop's server-side rules, checked against a scripted host (fakes.FakeLink)."""

from __future__ import annotations

import json
import time

from fakepeer.server.loop import ModelServer
from fakepeer.server.script import Fault, ScriptItem

from .fakes import FakeLink, echo_identity, publication, register_body, steps_then_complete

NULL = {"t": "null"}


def _server(link: FakeLink, **options: object) -> ModelServer:
    return ModelServer(link, **options)  # type: ignore[arg-type]


def test_declaration_is_persisted_with_its_work() -> None:
    link = FakeLink(steps_then_complete("a", "b"))
    server = _server(link)
    report = server.simulate("f", NULL)
    run = report.root
    assert run.status == "completed"
    assert list(run.declarations) == ["a", "b"]
    assert [body["mode"] for body in link.sent] == [
        "discover",
        "forward",
        "discover",
        "forward",
        "discover",
    ]
    # the forward target of a declared step is dispatched right after its declaration
    assert link.sent[1]["target"]["step_id"] == "a"
    assert [entry["step_id"] for entry in run.history_list()] == ["a", "b"]


def test_discovery_is_repeated_but_a_forward_attempt_is_not() -> None:
    """Repeatable orchestration is simply invoked again; an effectful callback's lost attempt
    becomes the next attempt of the same operation."""
    link = FakeLink(steps_then_complete("a"))
    faults = [Fault("lost_answer", mode="discover"), Fault("lost_answer", mode="forward")]
    report = _server(link).simulate("f", NULL, faults=faults)
    modes = [(body["mode"], body.get("target", {}).get("attempt")) for body in link.sent]
    assert modes == [
        ("discover", None),
        ("discover", None),
        ("forward", 1),
        ("forward", 2),
        ("discover", None),
    ]
    first, second = link.sent[2]["target"], link.sent[3]["target"]
    assert first["operation_id"] == second["operation_id"]
    assert first["fencing_generation"] != second["fencing_generation"]
    assert report.root.status == "completed"


def test_lost_attempt_is_a_transport_failure_not_target_not_found() -> None:
    link = FakeLink(steps_then_complete("a"))
    report = _server(link).simulate("f", NULL, faults=[Fault("crash", mode="forward", times=None)])
    assert report.root.status == "failed"
    assert report.root.error["category"] == "server.attempt_lost"
    assert "a" in report.root.declarations  # not made obsolete


def test_nothing_but_protocol_values_is_stored() -> None:
    """Callbacks are never serialized into server storage: the stored state is plain JSON."""
    report = _server(FakeLink(steps_then_complete("a", "b"))).simulate("f", NULL)
    for run in report.runs.values():
        stored = {
            "history": run.history_list(),
            "declarations": run.declarations,
            "input": run.input,
            "summary": run.summary(),
        }
        assert json.loads(json.dumps(stored)) == stored
    json.dumps(report.to_json())


def test_an_answer_with_another_identity_is_fenced_out() -> None:
    def answer(body: dict) -> tuple[str, dict]:
        if body["mode"] == "forward":
            wrong = echo_identity(body["target"], value=NULL)
            wrong["fencing_generation"] = "999"
            return "step_completed", wrong
        return steps_then_complete("a")(body)

    link = FakeLink(answer)
    report = _server(link).simulate("f", NULL)
    # not authoritative, so never applied: the outcome is unknown, retried as the next attempt
    # (D-FENCED-ANSWER); three fenced answers exhaust the default policy
    attempts = [body["target"]["attempt"] for body in link.sent if body["mode"] == "forward"]
    assert attempts == [1, 2, 3]
    assert report.root.history["a"]["status"] == "failed"
    assert report.root.history["a"]["error"]["category"] == "server.fenced"


def test_rejection_is_authoritative_only_when_it_names_the_request() -> None:
    def answer(body: dict, request: list[str]) -> tuple[str, dict]:
        if body["mode"] == "forward":
            reason = {"code": "admission_refused", "message": "busy", "retryable": True}
            target = body["target"]
            rejection = {
                "request_id": request[0],
                "attempt": target["attempt"],
                "fencing_generation": target["fencing_generation"],
                "reason": reason,
            }
            return "rejected_before_start", rejection
        return steps_then_complete("a")(body)

    wrong = FakeLink(lambda body: answer(body, ["another-request"]))
    report = _server(wrong).simulate("f", NULL)
    # not applied: not this request's rejection, so not "the callback never ran" either; the
    # outcome is unknown and the next attempt follows (D-FENCED-ANSWER)
    attempts = [body["target"]["attempt"] for body in wrong.sent if body["mode"] == "forward"]
    assert attempts == [1, 2, 3]
    assert report.root.history["a"]["error"]["category"] == "server.fenced"

    right = FakeLink(lambda body: answer(body, [right.last_request_id]))
    report = _server(right, max_invocations=5).simulate("f", NULL)
    attempts = [body["target"]["attempt"] for body in right.sent if body["mode"] == "forward"]
    assert attempts == [1, 1, 1, 1]  # the same attempt offered again: the callback never ran
    assert report.stopped is not None


def test_run_without_timeout_has_no_deadline_unless_a_policy_supplies_one() -> None:
    plain = _server(FakeLink(steps_then_complete("a"))).simulate("f", NULL)
    assert plain.root.deadline_ms is None
    policy = _server(FakeLink(steps_then_complete("a")), policy_timeout_ms=5000).simulate("f", NULL)
    assert (policy.root.deadline_ms, policy.root.deadline_source) == (
        policy.root.created_ms + 5000,
        "policy",
    )


def test_fan_out_resolves_the_absolute_deadline_and_its_source() -> None:
    link = FakeLink(steps_then_complete("a"), functions=[{"id": "f", "timeout_ms": "60000"}])
    report = _server(link, policy_timeout_ms=5000).simulate("f", NULL)
    assert report.root.deadline_ms == report.root.created_ms + 60000
    assert report.root.deadline_source == "function"


def test_child_of_another_application_is_not_started() -> None:
    def answer(body: dict) -> tuple[str, dict]:
        if not body["history"]:
            declaration = {
                "type": "invoke",
                "step_id": "c",
                "function_id": "elsewhere.fn",
                "input": NULL,
            }
            return "declared", {"declaration": declaration}
        return "completed", {"value": NULL}

    report = _server(FakeLink(answer)).simulate("f", NULL)
    assert list(report.runs) == ["run-1"]
    assert report.root.history["c"]["error"]["category"] == "server.unknown_function"


def test_a_one_hour_timer_takes_no_real_time() -> None:
    def answer(body: dict) -> tuple[str, dict]:
        if not body["history"]:
            return "declared", {
                "declaration": {"type": "timer", "step_id": "t", "delay_ms": "3600000"}
            }
        return "completed", {"value": NULL}

    started = time.monotonic()
    report = _server(FakeLink(answer)).simulate("f", NULL)
    assert report.elapsed_ms == 3_600_000
    assert time.monotonic() - started < 5.0


def test_runs_created_from_an_old_generation_run_on_current_code() -> None:
    """A run triggered under routing generation W1 keeps executing after W2 removes the
    trigger: routing is frozen per event, execution is not pinned to a generation."""
    triggers = [{"id": "t", "event": "go", "function": "f"}]
    holder: list[ModelServer] = []
    republished: list[str] = []
    plain = steps_then_complete("a")

    def answer(body: dict) -> tuple[str, dict]:
        if body["run_id"] != "run-1" and not republished:  # the triggered run's first pass
            server = holder[0]
            parent = server.store.active_generation(server.env.scope)
            server.store.publish(server.env.scope, publication([{"id": "f"}], [], parent=parent))
            republished.append(server.routing_generation() or "")
        return plain(body)

    link = FakeLink(answer, triggers=triggers)
    server = _server(link)
    holder.append(server)
    script = [ScriptItem(10, "event", event="go", payload={"t": "bytes", "v": ""})]
    report = server.simulate("f", NULL, script)
    triggered = [run for run in report.runs.values() if run.run_id != "run-1"]
    assert republished and server.routing_generation() == republished[0]
    assert [run.status for run in triggered] == ["completed"]
    assert sum(1 for body in link.sent if body["run_id"] == triggered[0].run_id) == 3


def test_work_without_a_compatible_worker_stays_queued_until_one_registers() -> None:
    link = FakeLink(steps_then_complete("a"))
    link.register_body = register_body(["other"])  # the live worker does not serve f
    server = _server(link)
    report = server.simulate("f", NULL)
    assert report.root.status == "running" and link.sent == []
    link.register_body = register_body(["f"], "i-2", "rel-2")
    link.restart()  # a compatible worker registers: the queued work is offered to it
    while server.scheduler.run_next():
        pass
    assert report.root.status == "completed"


def test_an_emission_is_accepted_once_per_identity() -> None:
    def answer(body: dict) -> tuple[str, dict]:
        if not body["history"]:
            declaration = {
                "type": "emit",
                "step_id": "e",
                "event": "x",
                "payload": {"t": "bytes", "v": ""},
                "metadata": {},
            }
            return "declared", {"declaration": declaration}
        return "completed", {"value": NULL}

    server = _server(FakeLink(answer))
    report = server.simulate("f", NULL)
    declaration = report.root.declarations["e"]
    server._emit(report.root, declaration)  # a repeated declaration of the same step
    assert [event.name for event in report.events] == ["x"]
    receipt = report.root.history["e"]["value"]["v"]
    assert receipt == report.events[0].event_id


def test_a_declaration_of_a_settled_step_is_a_host_fault() -> None:
    """A pass that declares a step its history settles ignored the history (an SDK bug the
    server reports instead of looping)."""

    def answer(body: dict) -> tuple[str, dict]:
        if body["mode"] == "forward":
            return "step_completed", echo_identity(body["target"], value=NULL)
        declaration = {
            "type": "step",
            "step_id": "a",
            "name": "a",
            "retry": {"max_attempts": 3, "backoff_ms": "1000"},
            "has_compensation": False,
        }
        return "declared", {"declaration": declaration}

    report = _server(FakeLink(answer)).simulate("f", NULL)
    assert report.host_fault is not None and "settles it" in report.host_fault
    assert report.root.status == "error"


def test_retry_decision_reads_the_retryable_flag_only() -> None:
    """Stack traces are diagnostic: an error carrying one (in details or a cause) is retried
    exactly as the same error without it."""

    def failing(extra: dict) -> object:
        def answer(body: dict) -> tuple[str, dict]:
            if body["mode"] == "forward":
                error = {"category": "app.x", "message": "x", "retryable": True, **extra}
                return "step_failed", echo_identity(body["target"], error=error)
            return steps_then_complete("a")(body)

        return answer

    plain = FakeLink(failing({"details": {}}))
    traced = FakeLink(
        failing(
            {
                "details": {"stack": "Traceback (most recent call last): ..."},
                "cause": {
                    "category": "io.x",
                    "message": "at line 3",
                    "retryable": False,
                    "details": {"stack": "..."},
                },
            }
        )
    )
    attempts = []
    for link in (plain, traced):
        _server(link).simulate("f", NULL)
        attempts.append([b["target"]["attempt"] for b in link.sent if b["mode"] == "forward"])
    assert attempts == [[1, 2, 3], [1, 2, 3]]


def _unwinding_workflow(body: dict, link: FakeLink) -> tuple[str, dict]:
    """Steps a, b then an uncaught failure; while the host's ambient `variant` is `broken`, a
    compensation target answers definition_blocked (as a duplicate id in its replay would)."""
    if body["mode"] == "compensate":
        if link.ambient.get("variant") == "broken":
            return "definition_blocked", {"reason": "duplicate_step_id", "step_id": "p"}
        return "compensation_completed", echo_identity(body["target"], value=NULL)
    if body["mode"] == "forward":
        return "step_completed", echo_identity(body["target"], value=NULL)
    done = {entry["step_id"] for entry in body["history"]}
    for step in ("a", "b"):
        if step not in done:
            declaration = {
                "type": "step",
                "step_id": step,
                "name": step,
                "retry": {"max_attempts": 3, "backoff_ms": "1000"},
                "has_compensation": True,
            }
            return "declared", {"declaration": declaration}
    return "failed", {"error": {"category": "app.stop", "message": "", "retryable": False}}


def test_a_run_blocked_mid_unwind_resumes_its_compensation_target() -> None:
    """D-BLOCKED-UNWIND: after the code change the blocked compensation target is offered again
    at the same attempt under a new fencing generation, never a forward discovery, and the unwind
    goes on from there."""
    link = FakeLink(lambda body: _unwinding_workflow(body, link))
    link.ambient["variant"] = "broken"
    script = [ScriptItem(5000, "code", key="variant", value="fixed")]
    report = _server(link).simulate("f", NULL, script=script)
    sent = [(body["mode"], body.get("target", {}).get("step_id")) for body in link.sent]
    assert sent == [
        ("discover", None),
        ("forward", "a"),
        ("discover", None),
        ("forward", "b"),
        ("discover", None),
        ("compensate", "b"),
        ("compensate", "b"),
        ("compensate", "a"),
    ]
    blocked, resumed = link.sent[5]["target"], link.sent[6]["target"]
    assert (resumed["operation_id"], resumed["attempt"]) == (blocked["operation_id"], 1)
    assert resumed["fencing_generation"] != blocked["fencing_generation"]
    assert report.root.status == "failed"
    assert report.root.compensated == ["b", "a"]


def test_a_deadline_while_blocked_mid_unwind_keeps_the_cause() -> None:
    """D-COMPENSATION-DEADLINE holds while the run is blocked on a compensation target."""
    link = FakeLink(lambda body: _unwinding_workflow(body, link))
    link.ambient["variant"] = "broken"
    report = _server(link, policy_timeout_ms=3000).simulate("f", NULL)
    assert report.root.status == "timed_out"
    assert report.root.error["category"] == "sdk.timeout"
    assert report.root.error["cause"]["category"] == "app.stop"


def test_each_method_of_the_model_server_has_one_home() -> None:
    """The loop's concerns are mixins of ModelServer (loop.py's docstring): a method defined in
    two of them would silently shadow the other by the order of inheritance."""
    homes: dict[str, list[str]] = {}
    for owner in ModelServer.__mro__[:-1]:
        for name, value in vars(owner).items():
            if callable(value) and not name.startswith("__"):
                homes.setdefault(name, []).append(owner.__module__)
    assert {name: found for name, found in homes.items() if len(found) > 1} == {}
    assert len(homes) > 50  # the mixins were read, not only ModelServer's own few
