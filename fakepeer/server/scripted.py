"""An in-process stand-in for `HostLink`: a Python function answers each invoke.

Why: the loop's rules are checked exactly and fast without a host process (tests/server), and
the model server's own speed is measured apart from any SDK's (bench/bench_lifecycle.py). The
real hosts are exercised by the lifecycle scenarios and `simulate`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from fakepeer.protocol.manifest import ManifestStore, contents_bytes
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.protocol.version import CAPABILITIES as PROTOCOL_CAPABILITIES
from fakepeer.protocol.version import PROTOCOL_VERSION

#: Every §7.3 capability: a scripted host can replay any history.
CAPABILITIES = list(PROTOCOL_CAPABILITIES)
CONTRACT = {"protocol_major": 1, "value_codec": "ryusen.tagged/1", "capabilities": CAPABILITIES}


def register_body(functions: list[str], instance: str = "i-1", release: str = "rel-1") -> dict:
    return {
        "scope": dict(CONFORM_SCOPE),
        "release": {"kind": "versioned", "id": release},
        "instance_id": instance,
        "manifest_hash": "sha256:" + "0" * 64,
        "functions": sorted(functions),
        "contract": dict(CONTRACT),
        "versions": [PROTOCOL_VERSION],
        "capabilities": list(CAPABILITIES),
        "capacity": {"max_concurrent": 1},
        "sdk": {"name": "fake", "version": "0", "language": "python", "runtime": "test"},
    }


def publication(functions: list[dict], triggers: list[dict], parent: str | None = None) -> dict:
    from fakepeer.protocol.manifest import build_registry

    decls, binds = build_registry(functions, triggers)
    contents = contents_bytes(decls, binds)
    return {
        "scope": dict(CONFORM_SCOPE),
        "expected_parent": parent,
        "functions": functions,
        "triggers": triggers,
        "contents": base64.b64encode(contents).decode("ascii"),
    }


Answer = Callable[[dict], tuple[str, dict]]


class ScriptedLink:
    """Answers each invoke with `answer(body)`; records every invoke body sent."""

    def __init__(
        self,
        answer: Answer,
        functions: list[dict] | None = None,
        triggers: list[dict] | None = None,
    ) -> None:
        self.answer = answer
        self.functions = functions or [{"id": "f"}]
        self.triggers = triggers or []
        self.sent: list[dict] = []
        self.ambient: dict[str, str] = {}
        self.admission_open = True
        self.restarts = 0
        self.last_request_id = ""
        self.on_start: Callable[[dict], None] | None = None
        self.register_body: dict | None = register_body([f["id"] for f in self.functions])
        self._count = 0

    def publish(self, store: ManifestStore) -> dict:
        body = publication(self.functions, self.triggers)
        store.publish(CONFORM_SCOPE, body)  # a policy maximum may reject it: the server checks
        return body

    def set_ambient(self, key: str, value: str) -> None:
        self.ambient[key] = value

    def set_admission(self, open_: bool) -> None:
        self.admission_open = open_

    def restart(self) -> None:
        self.restarts += 1
        if self.on_start is not None and self.register_body is not None:
            self.on_start(self.register_body)

    def invoke(self, body: dict, fault: str | None = None) -> tuple[dict | None, dict | None]:
        self._count += 1
        self.last_request_id = f"fake#{self._count}"
        self.sent.append(body)
        if fault == "crash":
            self.restart()
            return None, None
        kind, answer_body = self.answer(body)
        envelope: dict[str, Any] = {"kind": kind, "body": answer_body}
        if fault == "lost_answer":
            return None, None
        return envelope, (envelope if fault == "duplicate" else None)


def echo_identity(target: dict, **extra: Any) -> dict:
    """The three identity members of a targeted answer, copied from the target."""
    return {
        "operation_id": target["operation_id"],
        "attempt": target["attempt"],
        "fencing_generation": target["fencing_generation"],
        **extra,
    }


def steps_then_complete(*steps: str, value: dict | None = None) -> Answer:
    """A workflow of plain steps in order: declare the first unresolved one, else complete."""

    def answer(body: dict) -> tuple[str, dict]:
        done = {entry["step_id"]: entry for entry in body["history"]}
        if body["mode"] == "forward":
            return "step_completed", echo_identity(body["target"], value={"t": "null"})
        if body["mode"] == "compensate":
            return "compensation_completed", echo_identity(body["target"], value={"t": "null"})
        for step in steps:
            if step in done and done[step]["status"] == "failed":  # reproduced, not caught
                return "failed", {"error": done[step]["error"]}
            if step not in done:
                declaration = {
                    "type": "step",
                    "step_id": step,
                    "name": step,
                    "retry": {"max_attempts": 3, "backoff_ms": "1000"},
                    "has_compensation": False,
                }
                return "declared", {"declaration": declaration}
        return "completed", {"value": value or {"t": "null"}}

    return answer
