"""The SDK session and one case: handshake, reset, outcomes, respawn after errors."""

from __future__ import annotations

from fakepeer.cases import Scenario
from fakepeer.compare import Comparer
from fakepeer.session import Outcome, SdkSession, run_case
from fakepeer.session.sdk import SessionError
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import CAPABILITIES, MockSdk


def _run(sdk: MockSdk, session: SdkSession, run_id: str, **kwargs):
    fixture = echo_scenario(run_id, **kwargs).build()
    return run_case(session, fixture, timeout=5.0, comparer=Comparer())


def test_handshake_acks_exactly_the_offer_and_records_it() -> None:
    sdk = MockSdk(capabilities=["timers", "compensation", "future_thing"])
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    register, ack = sdk.received[0], sdk.received[1]
    assert register["kind"] == "conform.register"
    assert register["body"] == {
        "scope": {"workspace_id": "ws-conform", "application_id": "app-conform"},
        "release_id": "rel-conform-1",
        "instance_id": "conform-instance-1",
    }
    assert ack["kind"] == "register_ack" and ack["id"] == register["id"]
    assert ack["body"] == {
        "version": "1.0",
        "capabilities": ["timers", "compensation", "future_thing"],
        "required_capabilities": [],
    }
    assert session.capabilities == {"timers", "compensation", "future_thing"}


def test_one_process_serves_many_cases_with_a_reset_before_each() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    results = [_run(sdk, session, "ok", fixture_id=f"t.ok{n}") for n in range(3)]
    assert [r.outcome for r in results] == [Outcome.PASS] * 3
    assert sdk.starts == 1
    kinds = [e["kind"] for e in sdk.received]
    assert kinds.count("conform.reset") == 3
    assert kinds.index("conform.reset") < kinds.index("invoke")


def test_wire_log_records_every_frame_of_the_case() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    result = _run(sdk, session, "ok")
    kinds = [(r.direction, r.to_json()["json"]["kind"]) for r in result.wire]
    assert kinds == [
        ("sent", "conform.reset"),
        ("sent", "invoke"),
        ("sent", "conform.trace"),
        ("received", "conform.ack"),
        ("received", "completed"),
        ("received", "conform.trace"),
    ]


def test_first_case_wire_log_includes_the_handshake() -> None:
    sdk = MockSdk()
    result = _run(sdk, SdkSession(sdk.factory), "ok")
    assert result.wire[0].to_json()["json"]["kind"] == "conform.register"


def test_value_mismatch_is_fail_with_diff_and_keeps_the_process() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    result = _run(sdk, session, "wrong-value")
    assert result.outcome is Outcome.FAIL
    assert '/body/value/v: expected "hi", got "surprise"' in result.diff
    assert _run(sdk, session, "ok").outcome is Outcome.PASS
    assert sdk.starts == 1


def test_schema_violation_is_fail() -> None:
    sdk = MockSdk()
    result = _run(sdk, SdkSession(sdk.factory), "schema", expect_value=None)
    assert result.outcome is Outcome.FAIL
    assert any(f.kind == "schema" for f in result.findings)


def test_errors_cost_one_case_and_the_next_gets_a_fresh_process() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    expectations = {
        "crash": "crashed",
        "framing": "broke framing",
        "hang": "hung",
        "wrong-id": "answered out of turn",
        "garbage": "wrote garbage",
    }
    for run_id, reason in expectations.items():
        starts = sdk.starts
        result = _run(sdk, session, run_id)
        assert result.outcome is Outcome.ERROR, run_id
        assert reason in result.reason, (run_id, result.reason)
        follow = _run(sdk, session, "ok")
        assert follow.outcome is Outcome.PASS, (run_id, follow.reason)
        assert sdk.starts == starts + 1 or (starts == 0 and sdk.starts == 2)
    crash = _run(sdk, session, "crash")
    assert "mock: crashing" in crash.stderr_tail


def test_missing_capability_is_a_skip_naming_it() -> None:
    sdk = MockSdk(capabilities=["timers"])
    result = _run(sdk, SdkSession(sdk.factory), "ok", capabilities=("event_waits", "timers"))
    assert result.outcome is Outcome.SKIP
    assert result.reason == "the SDK does not offer the capabilities: event_waits"


def test_wrong_reset_answer_is_an_error() -> None:
    sdk = MockSdk(ack_kind="conform.nope")
    result = _run(sdk, SdkSession(sdk.factory), "ok")
    assert result.outcome is Outcome.ERROR
    assert "conform.reset" in result.reason


def test_failed_registration_is_an_error_then_the_sdk_is_given_up() -> None:
    sdk = MockSdk(registration="refused")
    session = SdkSession(sdk.factory)
    results = [_run(sdk, session, "ok", fixture_id=f"t.ok{n}") for n in range(4)]
    assert all(r.outcome is Outcome.ERROR for r in results)
    assert "registration handshake failed" in results[0].reason
    assert "attempts in a row" in results[-1].reason
    assert sdk.starts == 2


def test_shutdown_sends_conform_shutdown() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    session.shutdown()
    assert sdk.received[-1]["kind"] == "conform.shutdown"
    assert session.transport is None


def test_default_capabilities_constant() -> None:
    assert CAPABILITIES == sorted(CAPABILITIES)


def test_a_case_that_registers_again_is_followed_by_the_bench_handshake() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    fixture = (
        Scenario("registration.again", "t", section="s", quote="q", category="registration")
        .send("conform.register", {"scope": {}, "release_id": None, "instance_id": "i"})
        .expect("register", {}, vary=["/body/**"])
        .send("register_refused", {"code": "unauthorized_scope", "message": "no"})
        .expect("conform.registration_outcome", {}, vary=["/body/**"])
        .build()
    )
    result = run_case(session, fixture, timeout=5, comparer=Comparer())
    assert result.outcome is Outcome.PASS, result.reason
    assert session.registration_dirty
    before = [e["kind"] for e in sdk.received].count("conform.register")
    assert _run(sdk, session, "ok").outcome is Outcome.PASS
    after = [e["kind"] for e in sdk.received].count("conform.register")
    assert after == before + 1 and sdk.starts == 1
    assert not session.registration_dirty


def _ack_check(answer: bytes) -> str:
    """Run one reset whose ack is `answer` (bytes as written); '' when it is accepted."""
    session = SdkSession(MockSdk().factory)
    session.ensure_started(None)
    session.reset(None)
    ident = session._pending_reset
    assert ident is not None
    try:
        session._check_ack(ident, answer.replace(b"ID", ident.encode()))
    except SessionError as exc:
        return exc.reason
    return ""


def test_reset_ack_is_accepted_in_any_encoding_and_checked_in_every_one() -> None:
    # Byte-exact forms (no decoding) and any other spelling (decoded) are both accepted.
    assert _ack_check(b'{"version":"1.0","kind":"conform.ack","id":"ID","body":{}}') == ""
    assert _ack_check(b'{"body":{},"id":"ID","kind":"conform.ack","version":"1.0"}') == ""
    assert _ack_check(b'{ "kind": "conform.ack", "id": "ID", "version": "1.0", "body": {} }') == ""
    # Wrong id or kind fail whatever the spelling.
    wrong_id = b'{"version":"1.0","kind":"conform.ack","id":"IDx","body":{}}'
    assert "answered out of turn" in _ack_check(wrong_id)
    wrong_kind = b'{"version":"1.0","kind":"conform.nak","id":"ID","body":{}}'
    assert "not conform.ack" in _ack_check(wrong_kind)
    assert "wrote garbage" in _ack_check(b'{"version":"1.0","kind":"conform.ack","id":"ID"')


def test_an_extra_frame_after_the_script_is_an_error() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    transport = session.transport
    assert transport is not None
    answer = transport.handler  # type: ignore[attr-defined]

    def twice(payload: bytes) -> list[bytes]:
        frames = list(answer(payload))
        return frames * 2 if b'"invoke"' in payload else frames

    transport.handler = twice  # type: ignore[attr-defined]
    result = _run(sdk, session, "ok")
    assert result.outcome is Outcome.ERROR
    assert "an extra 'completed' frame" in result.reason


def test_nothing_waiting_is_only_sure_when_the_transport_can_tell() -> None:
    sdk = MockSdk()
    session = SdkSession(sdk.factory)
    session.ensure_started(None)
    assert session.nothing_waiting()
    session.reset(None)  # an ack is pending: only `receive` can tell
    assert not session.nothing_waiting()


def test_send_deadline_bounds_the_write_of_queued_frames() -> None:
    """`send` queues; the write at the next flush ends by the earliest deadline given to `send`
    for a queued frame or to `flush` itself (the base class's contract, transport/base.py)."""
    from fakepeer.transport.base import Transport

    class Recording(Transport):
        def __init__(self) -> None:
            super().__init__()
            self.writes: list[tuple[int, float | None]] = []

        def send(self, payload: bytes, deadline: float | None = None) -> None:
            raise AssertionError("the session writes queued frames with send_many")

        def send_many(self, payloads, deadline: float | None = None) -> None:
            self.writes.append((len(payloads), deadline))

        def receive(self, deadline: float | None = None) -> bytes:
            raise AssertionError("not reached")

        def close(self, wait: float = 0.0) -> None:
            pass

    transport = Recording()
    session = SdkSession(lambda: transport)
    session.transport = transport
    session.send(b"a", 50.0)
    session.send(b"b", 20.0)
    session.send(b"c", None)
    session.flush(30.0)
    session.send(b"d", 40.0)
    session.flush(None)
    session.flush(10.0)  # nothing queued: no write
    assert transport.writes == [(3, 20.0), (1, 40.0)]
