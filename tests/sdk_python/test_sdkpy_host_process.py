"""The conformance host as a subprocess: a framed handshake and one discovery (§12)."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path
from typing import Any

CONFORM = Path(__file__).resolve().parents[2] / "runners" / "python" / "conform"


class Session:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [str(CONFORM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def send_raw(self, payload: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(struct.pack(">I", len(payload)) + payload)
        self.process.stdin.flush()

    def send(self, kind: str, frame_id: str, body: dict[str, Any]) -> None:
        envelope = {"version": "1.0", "kind": kind, "id": frame_id, "body": body}
        self.send_raw(json.dumps(envelope).encode())

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        (length,) = struct.unpack(">I", self.process.stdout.read(4))
        return json.loads(self.process.stdout.read(length))


def test_handshake_and_discovery_over_frames() -> None:
    session = Session()
    try:
        scope = {"workspace_id": "ws-conform", "application_id": "app-conform"}
        session.send(
            "conform.register", "c#1", {"scope": scope, "release_id": None, "instance_id": "i-1"}
        )
        register = session.receive()
        assert (register["kind"], register["id"], register["version"]) == ("register", "c#1", "1.1")
        assert register["body"]["release"]["group"].startswith("unversioned:sha256:")
        session.send(
            "register_ack",
            "c#1",
            {
                "version": "1.0",
                "capabilities": ["timers", "compensation"],
                "required_capabilities": [],
            },
        )
        outcome = session.receive()
        assert outcome == {
            "version": "1.1",
            "kind": "conform.registration_outcome",
            "id": "c#1",
            "body": {
                "status": "registered",
                "version": "1.0",
                "capabilities": ["compensation", "timers"],
            },
        }
        program = {
            "t": "object",
            "v": {
                "ops": {
                    "t": "array",
                    "v": [
                        {
                            "t": "object",
                            "v": {"op": {"t": "str", "v": "run"}, "id": {"t": "str", "v": "a"}},
                        },
                    ],
                }
            },
        }
        session.send(
            "invoke",
            "c#2",
            {
                "run_id": "run-1",
                "function_id": "conform.program",
                "mode": "discover",
                "input": program,
                "history": [],
            },
        )
        answer = session.receive()
        assert answer["kind"] == "declared" and answer["id"] == "c#2"
        assert answer["body"]["declaration"]["step_id"] == "a"
        session.send_raw(b"{broken")
        error = session.receive()
        assert (error["kind"], error["id"]) == ("protocol_error", "-")
        assert error["body"]["error"]["details"] == {"pointer": ""}
        session.send("conform.reset", "c#3", {})
        assert session.receive()["kind"] == "conform.ack"
        session.send("conform.shutdown", "c#4", {})
        assert session.process.wait(timeout=10) == 0
    finally:
        if session.process.poll() is None:
            session.process.kill()
            session.process.wait()


def test_conform_runs_through_a_symlink_from_any_directory(tmp_path: Path) -> None:
    link = tmp_path / "conform"
    link.symlink_to(CONFORM)
    reset = json.dumps({"version": "1.0", "kind": "conform.reset", "id": "r", "body": {}}).encode()
    result = subprocess.run(
        [str(link)],
        input=struct.pack(">I", len(reset)) + reset,
        capture_output=True,
        cwd=tmp_path,
        timeout=30,
    )
    assert result.returncode == 0
    (length,) = struct.unpack(">I", result.stdout[:4])
    assert json.loads(result.stdout[4 : 4 + length])["kind"] == "conform.ack"
