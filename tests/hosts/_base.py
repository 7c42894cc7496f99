"""Shared by the hostile hosts: the Python reference conformance host plus one per-frame hook.

Why: a hostile host must be a *working* host apart from its one misbehaviour, so the bench can
be shown to isolate the damage (the other cases still pass after a respawn).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runners" / "python"

#: hook(host, kind, frame_id) -> True when it handled (or swallowed) the frame itself.
Hook = Callable[[object, str, str], bool]


def frame_info(payload: bytes) -> tuple[str, str]:
    """The frame's kind and id, best effort ("" when the frame does not decode)."""
    try:
        envelope = json.loads(payload)
    except ValueError:
        return "", ""
    if not isinstance(envelope, dict):
        return "", ""
    return str(envelope.get("kind", "")), str(envelope.get("id", ""))


def is_case(frame_id: str, case: str) -> bool:
    """Whether a bench frame belongs to the fixture `case` (exchange ids are `<case>#<n>`)."""
    return frame_id.startswith(case + "#")


def say(text: str) -> None:
    sys.stderr.write(f"hostile[{os.getpid()}]: {text}\n")
    sys.stderr.flush()


def hang() -> None:
    while True:
        time.sleep(3600)


def write_raw(data: bytes) -> None:
    """Bytes straight onto file descriptor 1, bypassing the SDK's framing (and `sys.stdout`,
    which the reference host points at stderr)."""
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def serve(hook: Hook) -> int:
    """Run the reference host with `hook` consulted before each frame it handles."""
    sys.path.insert(0, str(RUNNER))
    from conform_host import entry
    from conform_host import host as reference

    original = reference.Host.handle

    def handle(self: object, payload: bytes) -> None:
        kind, frame_id = frame_info(payload)
        if not hook(self, kind, frame_id):
            original(self, payload)

    reference.Host.handle = handle
    return entry.main()  # framed, or HTTP when asked


def write_frame_raw(payload: bytes) -> None:
    """One length-prefixed frame holding exactly `payload` (no encoding by the SDK)."""
    write_raw(len(payload).to_bytes(4, "big") + payload)


def trace_answer_in_case(case: str, answer: Callable[[object, str], None]) -> Hook:
    """A hook that lets `answer(host, frame_id)` write the `conform.trace` answers of fixture
    `case` (the trace follows the case's invoke, so the invoke's id names the case)."""
    current = [""]

    def hook(host: object, kind: str, frame_id: str) -> bool:
        if kind == "invoke":
            current[0] = frame_id
            return False
        if kind != "conform.trace" or not is_case(current[0], case):
            return False
        answer(host, frame_id)
        return True

    return hook
