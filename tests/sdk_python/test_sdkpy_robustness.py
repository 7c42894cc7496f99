"""Mutated frames: the host answers every frame exactly once and never crashes (§10.9)."""

from __future__ import annotations

import copy
import io
import json
import random
import struct
from typing import Any

from conform_host.host import Host
from ryusen_sdk import to_tagged

OPS = [
    {"op": "run", "id": "a", "compensate": True, "echo": True},
    {"op": "sleep", "id": "s", "duration": "1s", "catch": True, "as": "x"},
    {"op": "wait", "id": "w", "event": "e", "timeout": 5},
    {"op": "emit", "id": "m", "event": "e", "payload": "x", "catch": True},
    {"op": "catch_all", "ops": [{"op": "run", "id": "a"}]},
    {"op": "duration", "value": "1h", "as": "d"},
]
BASE = {
    "version": "1.0",
    "kind": "invoke",
    "id": "f",
    "body": {
        "run_id": "r",
        "function_id": "conform.program",
        "mode": "forward",
        "input": to_tagged({"ops": OPS}),
        "history": [
            {"step_id": "a", "status": "completed", "value": to_tagged([1, {"x": "y"}])},
            {
                "step_id": "s",
                "status": "failed",
                "error": {"category": "a.b", "message": "m", "retryable": False, "details": {}},
            },
        ],
        "target": {
            "run_id": "r",
            "step_id": "a",
            "phase": "forward",
            "attempt": 1,
            "operation_id": "o",
            "fencing_generation": "1",
        },
    },
}
ATOMS: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x", "1.0", "discover", "compensate", [], {}]
ANSWER_KINDS = {
    "protocol_error",
    "declared",
    "completed",
    "failed",
    "definition_blocked",
    "step_completed",
    "step_failed",
    "compensation_completed",
    "compensation_failed",
    "target_not_found",
    "rejected_before_start",
}


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, path + (index,))
    return found


def _mutate(rng: random.Random) -> bytes:
    document = copy.deepcopy(BASE)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(document)[1:])
        parent: Any = document
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.3:
            del parent[path[-1]]
        else:
            parent[path[-1]] = rng.choice(ATOMS)
    payload = json.dumps(document).encode()
    if rng.random() < 0.05:
        payload = payload[: rng.randint(0, len(payload))]
    return payload


def test_every_mutated_frame_gets_exactly_one_answer() -> None:
    rng = random.Random(20261130)
    payloads = [_mutate(rng) for _ in range(400)]
    stream = b"".join(struct.pack(">I", len(p)) + p for p in payloads)
    out = io.BytesIO()
    assert Host(io.BytesIO(stream), out).serve() == 0
    data, answers = out.getvalue(), []
    while data:
        (length,) = struct.unpack(">I", data[:4])
        answers.append(json.loads(data[4 : 4 + length]))
        data = data[4 + length :]
    assert len(answers) == len(payloads)
    for answer in answers:
        assert answer["version"] == "1.1"  # the version the SDK speaks
        assert answer["kind"] in ANSWER_KINDS
        assert isinstance(answer["id"], str) and 1 <= len(answer["id"]) <= 256
        if answer["kind"] == "protocol_error":
            assert set(answer["body"]["error"]["details"]) == {"pointer"}
