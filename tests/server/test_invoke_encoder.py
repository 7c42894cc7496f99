"""The model server encodes invokes reusing the bytes of the run's input and accepted history:
the frames must be exactly those `encode_envelope` writes, however the history grows."""

from __future__ import annotations

import json

from fakepeer.protocol.encode import encode_envelope
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.server.host import InvokeEncoder


def _body(history: list[dict], run_input: dict) -> dict:
    return {
        "run_id": "run-1",
        "function_id": "conform.program",
        "mode": "forward",
        "input": run_input,
        "history": history,
        "target": {
            "run_id": "run-1",
            "step_id": "s2",
            "phase": "forward",
            "attempt": 1,
            "operation_id": "op:run-1:forward:s2",
            "fencing_generation": "7",
        },
    }


def _envelope(ident: str, body: dict) -> dict:
    return {"version": PROTOCOL_VERSION, "kind": "invoke", "id": ident, "body": body}


def test_frames_are_byte_for_byte_those_of_the_plain_encoder() -> None:
    encoder = InvokeEncoder()
    run_input = {"t": "object", "v": {"ops": {"t": "str", "v": 'héllo \u2028 "x"'}}}
    history: list[dict] = []
    for index in range(5):
        body = _body(list(history), run_input)
        assert encoder.encode(f"server.invoke#{index}", body) == encode_envelope(
            _envelope(f"server.invoke#{index}", body)
        )
        history.append(
            {"step_id": f"s{index}", "status": "completed", "value": {"t": "i64", "v": str(index)}}
        )


def test_a_changed_object_at_a_reused_identity_is_not_served_stale() -> None:
    """The cache holds what it encoded, so an id can never be taken by another object."""
    encoder = InvokeEncoder()
    first = {"t": "str", "v": "one"}
    encoder.encode("a", _body([], first))
    second = {"t": "str", "v": "two"}
    frame = encoder.encode("b", _body([], second))
    assert json.loads(frame)["body"]["input"] == second


def test_a_lone_surrogate_is_written_as_an_escape() -> None:
    encoder = InvokeEncoder()
    body = _body([], {"t": "str", "v": "\ud800"})
    frame = encoder.encode("x", body)
    assert b"\\ud800" in frame
    assert json.loads(frame) == _envelope("x", body)
