"""One long-lived SDK session that plays semantic cases: host state, one invoke, its trace.

Why the bench's session layer: the fuzzer starts, registers, times out and respawns SDK hosts
exactly as `ryusen-conform run` does (fuzz/echo.py does the same for conform.echo).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fakepeer.fuzz.programs import SemanticCase
from fakepeer.protocol.encode import encode_frame
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
        self._counter = 0
        #: True when the host may hold ambient state or closed admission from the last case (or
        #: is new): the next case resets it first. A fresh host needs no reset, but one costs
        #: little and keeps the rule simple.
        self._dirty = True

    def start(self, until: float | None = None) -> None:
        """Spawn and register now, so start-up problems surface before fuzzing (by `until`,
        the campaign's --max-time, at the latest)."""
        deadline = time.monotonic() + max(self.timeout, 10.0)
        self.session.ensure_started(deadline if until is None else min(deadline, until))

    def play(self, case: SemanticCase, until: float | None = None) -> Played:
        """Reset the host when the last case changed its state, set ambient state and admission,
        send the invoke and ask for its trace: every frame written at once (a host serves them
        in order, §12.1), then the answers read in turn; by `until` (the campaign's --max-time)
        at the latest."""
        self.played += 1
        deadline = time.monotonic() + self.timeout
        if until is not None:
            deadline = min(deadline, until)
        frames: list[tuple[str, str, dict]] = []
        if self._dirty:
            frames.append(("conform.reset", "conform.ack", {}))
        for key, value in case.ambient:
            frames.append(("conform.set_ambient", "conform.ack", {"key": key, "value": value}))
        if not case.admission:
            frames.append(("conform.set_admission", "conform.ack", {"open": False}))
        frames.append(("invoke", "", case.body))
        frames.append(("conform.trace", "conform.trace", {}))
        self._dirty = bool(case.ambient) or not case.admission
        try:
            self.session.ensure_started(deadline)
            idents = []
            for kind, _, body in frames:
                self._counter += 1
                ident = f"fuzz.{kind.removeprefix('conform.')}#{self._counter}"
                idents.append(ident)
                self.session.send(encode_frame(kind, body, ident), deadline)
            answers = [self.session.expect_answer(ident, deadline, None) for ident in idents]
        except TransportError as exc:
            return self._broken(f"{exc.reason}: {exc.detail}")
        except SessionError as exc:
            return self._broken(exc.reason)
        for (kind, wanted, _), answer in zip(frames[:-2], answers, strict=False):
            if answer.get("kind") != wanted:
                return Played(broken=f"answered {kind} with {answer.get('kind')!r}, not {wanted}")
        request_id, answer, traced = idents[-2], answers[-2], answers[-1]
        body = traced.get("body")
        events = body.get("events") if isinstance(body, dict) else None
        if traced.get("kind") != "conform.trace" or not isinstance(events, list):
            return Played(request_id, answer, None, f"a malformed trace answer: {traced!r:.200}")
        return Played(request_id, answer, events)

    def _broken(self, reason: str) -> Played:
        self._dirty = True
        tail = self.session.discard()
        return Played(broken=f"{reason}; stderr: {tail[-400:]}" if tail else reason)

    def close(self) -> None:
        self.session.shutdown()
