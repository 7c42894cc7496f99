"""One long-lived SDK session that plays semantic cases: host state, one invoke, its trace.

Why the bench's session layer: the fuzzer starts, registers, times out and respawns SDK hosts
exactly as `ryusen-conform run` does (fuzz/echo.py does the same for conform.echo).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fakepeer.fuzz.programs import SemanticCase
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError


@dataclass(frozen=True)
class Played:
    """What the SDK did for one case: its answer and trace, or why there were none."""

    request_id: str = ""
    answer: dict | None = None
    trace: list | None = None
    broken: str = ""


class SemanticSession:
    """Plays one case per `play` call; a broken SDK is discarded and restarted lazily."""

    def __init__(self, target: SdkTarget, timeout: float) -> None:
        self.target = target
        self.timeout = timeout
        self.session = SdkSession(target.factory)
        self.played = 0

    def start(self) -> None:
        """Spawn and register now, so start-up problems surface before fuzzing."""
        self.session.ensure_started(time.monotonic() + max(self.timeout, 10.0))

    def play(self, case: SemanticCase) -> Played:
        """Reset the host, set its ambient state and admission, send the invoke, read the trace."""
        self.played += 1
        deadline = time.monotonic() + self.timeout
        try:
            self.session.ensure_started(deadline)
            self._control("conform.reset", {}, deadline)
            for key, value in case.ambient:
                self._control("conform.set_ambient", {"key": key, "value": value}, deadline)
            if not case.admission:
                self._control("conform.set_admission", {"open": False}, deadline)
            request_id, answer = self.session.request("invoke", case.body, deadline, None)
            _, traced = self.session.request("conform.trace", {}, deadline, None)
        except TransportError as exc:
            return self._broken(f"{exc.reason}: {exc.detail}")
        except SessionError as exc:
            return self._broken(exc.reason)
        body = traced.get("body")
        events = body.get("events") if isinstance(body, dict) else None
        if traced.get("kind") != "conform.trace" or not isinstance(events, list):
            return Played(request_id, answer, None, f"a malformed trace answer: {traced!r:.200}")
        return Played(request_id, answer, events)

    def _control(self, kind: str, body: dict, deadline: float) -> None:
        _, answer = self.session.request(kind, body, deadline, None)
        if answer.get("kind") != "conform.ack":
            raise SessionError(f"answered {kind} with {answer.get('kind')!r}, not conform.ack")

    def _broken(self, reason: str) -> Played:
        tail = self.session.discard()
        return Played(broken=f"{reason}; stderr: {tail[-400:]}" if tail else reason)

    def close(self) -> None:
        self.session.shutdown()
