"""The reference decoder: the §2 decoding order with §5.2 categories and §3.4 pointers."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fakepeer.protocol.decode import ProtocolViolation, decode_frame, parse_envelope
from fakepeer.protocol.messages import KINDS

REPO = Path(__file__).resolve().parents[2]
OUTCOMES = ("conform.registration_outcome", "conform.publication_outcome")
DECODING_CATEGORIES = (
    "protocol.malformed",
    "protocol.unknown_variant",
    "protocol.invalid_value",
    "protocol.limit_exceeded",
)
CONFORMANCE_FUNCTIONS = frozenset(
    {"conform.saga", "conform.program", "conform.echo", "conform.unportable"}
)


def _invoke(**body: Any) -> dict[str, Any]:
    envelope = copy.deepcopy(KINDS["invoke"].example)
    envelope["body"].update(body)
    return envelope


def _raw(envelope: dict[str, Any]) -> bytes:
    return json.dumps(envelope, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _refused(payload: bytes) -> tuple[str, str]:
    with pytest.raises(ProtocolViolation) as info:
        decode_frame(payload)
    return info.value.category, info.value.pointer


@pytest.mark.parametrize("kind", list(KINDS))
def test_catalog_examples_decode(kind: str) -> None:
    assert decode_frame(_raw(KINDS[kind].example)) == KINDS[kind].example


def _without(envelope: dict[str, Any], member: str) -> dict[str, Any]:
    del envelope["body"][member]
    return envelope


@pytest.mark.parametrize(
    ("envelope", "expected"),
    [
        (_without(_invoke(), "run_id"), ("protocol.malformed", "/body/run_id")),
        (_without(_invoke(), "history"), ("protocol.malformed", "/body/history")),
        (_without(_invoke(), "target"), ("protocol.malformed", "/body/target")),
        (_invoke(run_id=5), ("protocol.malformed", "/body/run_id")),
        (_invoke(mode="replay"), ("protocol.unknown_variant", "/body/mode")),
        (_invoke(mode=1), ("protocol.malformed", "/body/mode")),
        (_invoke(history={}), ("protocol.malformed", "/body/history")),
        (_invoke(input=5), ("protocol.invalid_value", "/body/input")),
        (_invoke(input={"t": "i64", "v": "007"}), ("protocol.invalid_value", "/body/input")),
        (
            _invoke(input={"t": "array", "v": [{"t": "null"}, {"t": "f64", "v": "1.0"}]}),
            ("protocol.invalid_value", "/body/input/v/1"),
        ),
    ],
)
def test_body_checks(envelope: dict[str, Any], expected: tuple[str, str]) -> None:
    assert _refused(_raw(envelope)) == expected


def test_invoke_rules_of_section_9_1() -> None:
    envelope = _invoke()
    envelope["body"]["target"]["phase"] = "compensation"
    assert _refused(_raw(envelope)) == ("protocol.malformed", "/body/target/phase")
    envelope["body"]["target"]["phase"] = "sideways"
    assert _refused(_raw(envelope)) == ("protocol.unknown_variant", "/body/target/phase")
    envelope = _invoke()
    envelope["body"]["target"]["run_id"] = "run-2"
    assert _refused(_raw(envelope)) == ("protocol.malformed", "/body/target/run_id")
    envelope = _invoke()
    envelope["body"]["history"].append(copy.deepcopy(envelope["body"]["history"][0]))
    assert _refused(_raw(envelope)) == ("protocol.malformed", "/body/history/2/step_id")
    envelope = _invoke(mode="discover")
    envelope["body"]["target"] = {"phase": "nonsense"}  # ignored for discover
    assert decode_frame(_raw(envelope))["body"]["mode"] == "discover"
    envelope = _invoke()
    envelope["body"]["history"][0]["status"] = "skipped"
    assert _refused(_raw(envelope)) == ("protocol.unknown_variant", "/body/history/0/status")


def test_limits() -> None:
    entries = [
        {"step_id": f"s{i}", "status": "completed", "value": {"t": "null"}} for i in range(1025)
    ]
    assert _refused(_raw(_invoke(history=entries))) == ("protocol.limit_exceeded", "/body/history")
    decode_frame(_raw(_invoke(history=entries[:1024])))
    big = {"t": "bytes", "v": base64.b64encode(b"\0" * 3_200_000).decode()}
    assert _refused(_raw(_invoke(input=big))) == ("protocol.limit_exceeded", "")
    large = {"t": "str", "v": "x" * (1024 * 1024)}
    assert _refused(_raw(_invoke(input=large))) == ("protocol.limit_exceeded", "/body/input")
    deep: dict[str, Any] = {"t": "null"}
    for _ in range(300):
        deep = {"t": "array", "v": [deep]}
    category, pointer = _refused(_raw(_invoke(input=deep)))
    assert (category, pointer) == ("protocol.limit_exceeded", "/body/input" + "/v/0" * 64)


def test_value_limits_come_before_invalid_values() -> None:
    deep: dict[str, Any] = {"t": "null"}
    for _ in range(64):
        deep = {"t": "array", "v": [deep]}
    envelope = _invoke(input={"t": "i64", "v": "x"})
    envelope["body"]["history"][0]["value"] = deep
    category, pointer = _refused(_raw(envelope))
    assert category == "protocol.limit_exceeded"
    assert pointer.startswith("/body/history/0/value")


def test_lone_surrogates_inside_values_are_invalid_values() -> None:
    head = '{"version":"1.0","kind":"invoke","id":"x","body":{"run_id":"r","function_id":"f",'
    tail = ',"history":[],"mode":"discover"}}'
    surrogate = head + '"input":{"t":"array","v":[{"t":"null"},{"t":"str","v":"\\ud800"}]}' + tail
    assert parse_envelope(surrogate.encode())["body"]["input"]["v"][1]["v"] == "\ud800"
    assert _refused(surrogate.encode()) == ("protocol.invalid_value", "/body/input/v/1")
    key = head + '"input":{"t":"array","v":[{"t":"object","v":{"\\udc00":{"t":"null"}}}]}' + tail
    assert _refused(key.encode()) == ("protocol.invalid_value", "/body/input/v/0")
    pair = head + '"input":{"t":"str","v":"\\ud83d\\ude00"}' + tail
    assert decode_frame(pair.encode())["body"]["input"]["v"] == "\U0001f600"


def test_repeated_keys_anywhere_are_malformed_frames() -> None:
    head = '{"version":"1.0","kind":"invoke","id":"x","body":{"run_id":"r","function_id":"f",'
    tail = ',"history":[],"mode":"discover"}}'
    duplicate = head + '"input":{"t":"object","v":{"a":{"t":"null"},"a":{"t":"null"}}}' + tail
    assert _refused(duplicate.encode()) == ("protocol.malformed", "")
    repeated_tag = head + '"input":{"t":"i64","t":"u64","v":"1"}' + tail
    assert _refused(repeated_tag.encode()) == ("protocol.malformed", "")


def test_lone_surrogates_and_repeated_keys_elsewhere_are_malformed_frames() -> None:
    base = '{"version":"1.0","kind":"invoke","id":"x","body":{"run_id":"%s","function_id":"f",'
    rest = '"input":{"t":"null"},"history":[],"mode":"discover"}}'
    assert _refused((base % "\\ud800" + rest).encode()) == ("protocol.malformed", "")
    twice = base % "r" + '"mode":"discover",' + rest
    assert _refused(twice.encode()) == ("protocol.malformed", "")
    unknown = '{"version":"1.0","kind":"nope","id":"x","body":{"v":{"a":1,"a":2}}}'
    assert _refused(unknown.encode()) == ("protocol.malformed", "")


def test_unknown_function_needs_the_registry() -> None:
    discover = _invoke(mode="discover", function_id="nope")
    assert decode_frame(_raw(discover))["body"]["function_id"] == "nope"
    refused = _refused_with(_raw(discover), CONFORMANCE_FUNCTIONS)
    assert refused == ("protocol.unknown_function", "/body/function_id")
    forward = _invoke(function_id="nope")  # answered rejected_before_start, not protocol_error
    assert decode_frame(_raw(forward), CONFORMANCE_FUNCTIONS)["body"]["mode"] == "forward"
    assert decode_frame(_raw(_invoke(mode="discover")), CONFORMANCE_FUNCTIONS)


def _refused_with(payload: bytes, functions: frozenset[str]) -> tuple[str, str]:
    with pytest.raises(ProtocolViolation) as info:
        decode_frame(payload, functions)
    return info.value.category, info.value.pointer


def test_nested_cause_chains_do_not_crash() -> None:
    error: dict[str, Any] = {"category": "a", "message": "m", "retryable": False, "details": {}}
    for _ in range(400):
        error = {"category": "a", "message": "m", "retryable": False, "details": {}, "cause": error}
    envelope = {"version": "1.0", "kind": "failed", "id": "x", "body": {"error": error}}
    try:
        decode_frame(_raw(envelope))
    except ProtocolViolation as violation:
        assert violation.category == "protocol.malformed"


#: Bench requests a host answers only after the server's answer (a register_ack, a manifest_*).
OPENS_SERVER_TURN = ("conform.register", "conform.publish")
#: The server answers each open request awaits: another kind decodes fine and is refused by the
#: open exchange, not by decoding (D-SERVER-ANSWER-DECODE).
AWAITED_ANSWERS = {
    "conform.register": ("register_ack", "register_refused"),
    "conform.publish": ("manifest_activated", "manifest_conflict", "manifest_rejected"),
}
SERVER_ANSWERS = {kind for kinds in AWAITED_ANSWERS.values() for kind in kinds}


def _fixture_cases() -> list[tuple[str, bytes, str, str | None, bool]]:
    """(name, payload, category, pointer, idle) of every fixture send answered by
    protocol_error; `idle` when no request of the host awaits a server answer."""
    macros = pytest.importorskip("fakepeer.cases.macros")
    cases = []
    for path in sorted((REPO / "fixtures").rglob("*.json")):
        steps = json.loads(path.read_text(encoding="utf-8")).get("steps", [])
        idle = True  # no conform.register or conform.publish is waiting for a server answer
        awaited: tuple[str, ...] = ()
        for step, answer in zip(steps, steps[1:], strict=False):
            sent = step.get("send", {}).get("kind") if isinstance(step, dict) else None
            if sent in OPENS_SERVER_TURN:
                idle, awaited = False, AWAITED_ANSWERS[sent]
            elif not idle and sent in SERVER_ANSWERS and sent not in awaited:
                continue  # an answer of the wrong kind for the open request (see AWAITED_ANSWERS)
            expect = answer.get("expect") if isinstance(answer, dict) else None
            if not expect:
                continue
            if isinstance(step, dict) and "http" in step:
                continue  # an HTTP fault (unsigned, stale, oversized by its header) is refused
                # by the transport before any decoding (docs/protocol.md §1.1, D-HTTP-AUTH)
            body = expect.get("body", {})
            if expect.get("kind") == "protocol_error":
                error = body.get("error", {})
            elif expect.get("kind") in OUTCOMES and body.get("status") == "failed":
                error = body.get("error", {})  # a server answer that does not decode (§12.3)
                if error.get("category") not in DECODING_CATEGORIES:
                    continue  # negotiation failures decode fine
            else:
                continue
            if (
                not str(error.get("category", "")).startswith("protocol.")
                or error.get("category") == "protocol.unknown_capability"
            ):
                continue  # decided by negotiation, not by decoding
            if "send_raw" in step:
                payload = step["send_raw"].encode("utf-8", "surrogatepass")
            elif "send_raw_base64" in step:
                payload = base64.b64decode(step["send_raw_base64"])
            elif "send" in step:
                send = step["send"]
                envelope = {
                    "version": send.get("version", "1.0"),
                    "kind": send["kind"],
                    "id": send.get("id", "x"),
                    "body": macros.expand(send["body"]),
                    **macros.expand(send.get("extra", {})),
                }
                payload = _raw(envelope)
            else:
                continue
            pointer = error.get("details", {}).get("pointer")
            cases.append((path.name, payload, error["category"], pointer, idle))
    return cases


def test_decoder_agrees_with_the_fixture_corpus() -> None:
    if not (REPO / "fixtures").is_dir():
        pytest.skip("no fixture corpus")
    disagreements = []
    for name, payload, category, pointer, idle in _fixture_cases():
        try:
            decode_frame(payload, CONFORMANCE_FUNCTIONS, to_sdk=idle)
            got: tuple[str, str] | None = None
        except ProtocolViolation as violation:
            got = (violation.category, violation.pointer)
        if got is None or got[0] != category or (pointer is not None and got[1] != pointer):
            disagreements.append(f"{name}: fixture {category} {pointer!r}, decoder {got}")
    assert not disagreements, "\n".join(disagreements)


@pytest.mark.parametrize(
    ("kind", "category"),
    [("declared", "protocol.unknown_variant"), ("conform.ack", "protocol.unknown_variant"),
     ("register_ack", "protocol.malformed"), ("manifest_conflict", "protocol.malformed")],
)  # fmt: skip
def test_an_idle_sdk_refuses_kinds_it_never_receives_and_answers_out_of_turn(
    kind: str, category: str
) -> None:
    """docs/protocol.md §2: a worker or host kind sent to an SDK is an unknown variant; a server
    answer with no request open is out of turn. Either way the pointer is `/kind`."""
    payload = _raw(KINDS[kind].example)
    assert decode_frame(payload) == KINDS[kind].example  # valid as a message of its own
    with pytest.raises(ProtocolViolation) as raised:
        decode_frame(payload, to_sdk=True)
    assert (raised.value.category, raised.value.pointer) == (category, "/kind")
    assert decode_frame(_raw(KINDS["invoke"].example), to_sdk=True)
