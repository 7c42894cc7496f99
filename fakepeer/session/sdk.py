"""One long-lived SDK session: spawn, the §12.1 handshake, `conform.reset`, shutdown, respawn.

One process serves many cases (like protobuf's conformance runner). A case that breaks the
stream (crash, hang, garbage, wrong id) calls `end`, and the next case starts a fresh process
with a fresh handshake.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from fakepeer.protocol import fastpath, strictjson
from fakepeer.protocol.encode import encode_frame, frame_templates, spelled_as
from fakepeer.protocol.messages import CONFORM_INSTANCE_ID, CONFORM_RELEASE_ID, CONFORM_SCOPE
from fakepeer.protocol.version import negotiated_version
from fakepeer.session.wire import WireLog
from fakepeer.transport.base import Transport
from fakepeer.transport.errors import TransportError, TransportTimeout

if TYPE_CHECKING:
    from fakepeer.session.results import CaseResult

SHUTDOWN_WAIT_SECONDS = 1.0
#: How long, at least, the bench listens after a session's last case for a frame nobody asked
#: for (a second answer) before it sends `conform.shutdown`; `late_window` scales it up with
#: the time the session's cases take, to at most LATE_FRAME_MAX_SECONDS.
LATE_FRAME_WAIT_SECONDS = 0.5
LATE_FRAME_MAX_SECONDS = 5.0
#: The wait before a healthy host is discarded mid-run (a lifecycle restart, the fresh-process
#: variant), at least and at most: a copy written with its answer is in the pipe by then.
DISCARD_WAIT_SECONDS = 0.05
DISCARD_WAIT_MAX_SECONDS = 0.25
#: How many of the session's latest cases set the pace `late_window` scales with.
PACE_CASES = 32
#: After this many handshakes in a row fail, the SDK is declared unusable for the run.
MAX_CONSECUTIVE_START_FAILURES = 2

_RESET_TEMPLATE = frame_templates("conform.reset")[0]
_SHUTDOWN_ID = "bench.shutdown"
_SHUTDOWN = encode_frame("conform.shutdown", {}, _SHUTDOWN_ID)
#: The `conform.ack` of a reset in either usual spelling passes its checks without decoding.
_ACK_TEMPLATES = frame_templates("conform.ack")

TransportFactory = Callable[[], Transport]
Validator = Callable[[dict], Sequence[object]]


class SessionError(Exception):
    """The conversation with the SDK went wrong in a way that ends the session."""

    def __init__(self, reason: str, stderr: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr


class SdkUnavailable(SessionError):
    """The SDK failed to start repeatedly; no further attempts are made."""


class StrayAnswer(SessionError):
    """A frame with an id other than the awaited one: maybe a late copy of an earlier answer.

    Carries the frame so the case that owns its id can be blamed (see `attribution`).
    """

    def __init__(self, reason: str, ident: object, kind: object, payload: bytes) -> None:
        super().__init__(reason)
        self.ident = ident
        self.kind = kind
        self.payload = payload

    @classmethod
    def unexpected(
        cls, payload: bytes, envelope: dict, expected_id: str, expected_kind: str | None = None
    ) -> StrayAnswer:
        """A frame that came instead of the answer with `expected_id` (of `expected_kind`)."""
        got, kind = envelope.get("id"), envelope.get("kind")
        if expected_kind is None:
            reason = f"expected id {expected_id!r}, got {got!r} (kind {kind!r})"
        else:
            reason = (
                f"expected a {expected_kind!r} frame with id {expected_id!r}, "
                f"got {kind!r} with id {got!r}"
            )
        return cls(f"answered out of turn: {reason}", got, kind, payload)

    @classmethod
    def extra(
        cls, payload: bytes, envelope: dict, when: str = "", word: str = "extra"
    ) -> StrayAnswer:
        """A frame nobody asked for: `an extra 'kind' frame with id 'x' <when>`."""
        got, kind = envelope.get("id"), envelope.get("kind")
        reason = f"an {word} {kind!r} frame with id {got!r}"
        return cls(
            f"answered out of turn: {reason}{' ' + when if when else ''}", got, kind, payload
        )

    def restated(self, reason: str, stderr: str) -> StrayAnswer:
        """The same stray frame under another reason (once the process was ended)."""
        stray = StrayAnswer(reason, self.ident, self.kind, self.payload)
        stray.stderr = stderr
        return stray


def decode(payload: bytes) -> dict:
    """Decode an SDK frame to an envelope-shaped dict, or raise SessionError (garbage).

    As strict as the protocol (§1-§3): repeated keys, NaN/Infinity, numbers beyond a double and
    nesting past MAX_JSON_NESTING are refused here, before anything walks the frame.
    """
    try:
        document = strictjson.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SessionError(f"wrote garbage: a frame that is not UTF-8 JSON ({exc})") from None
    if not isinstance(document, dict):
        raise SessionError("wrote garbage: a frame that is not a JSON object")
    return document


class SdkSession:
    """Owns at most one live SDK process at a time and knows what it offered at registration."""

    def __init__(self, factory: TransportFactory, validator: Validator | None = None) -> None:
        self._factory = factory
        self._validator = validator
        self.transport: Transport | None = None
        self.capabilities: frozenset[str] | None = None
        #: The version acknowledged at registration (§7.2): fixtures needing a later one skip.
        self.version: str | None = None
        self.register_body: dict | None = None
        self.handshake_problems: list[str] = []
        self.starts = 0
        self._start_failures = 0
        self._unavailable: str | None = None
        self._unavailable_stderr = ""
        self._counter = 0
        self._outbox: list[bytes] = []
        self._outbox_deadline: float | None = None
        #: Set when a case sent its own `conform.register`; the next case registers again first.
        self.registration_dirty = False
        self._pending_reset: str | None = None
        #: Set once `late_frame` sent `conform.shutdown` to the current process.
        self._shutdown_sent = False
        #: The cases the current process has finished, oldest first (filled by `run_case`).
        #: Emptied when a new process starts.
        self.served: list[CaseResult] = []
        #: Every exchange id the current process was sent, to the case that sent it (None when
        #: several did): a stray frame finds its owner however far back (`attribution.owner`).
        self.owners: dict[str, CaseResult | None] = {}

    # ----------------------------------------------------------------- life cycle

    def ensure_started(self, deadline: float | None, wire: WireLog | None = None) -> Transport:
        """Return the live transport, spawning and registering a new SDK process if needed."""
        if self.transport is not None:
            if self.registration_dirty:  # a case re-registered: restore the bench's registration
                self.registration_dirty = False
                try:
                    self._handshake(deadline, wire)
                except (SessionError, TransportError) as exc:
                    raise self._ended(exc, "re-registration failed") from None
            return self.transport
        if self._unavailable is not None:
            raise SdkUnavailable(self._unavailable, self._unavailable_stderr)
        try:
            self.transport = self._factory()
        except (OSError, ValueError) as exc:
            self._unavailable = f"cannot start the SDK: {exc}"
            raise SdkUnavailable(self._unavailable) from None
        self.starts += 1
        self._shutdown_sent = False
        self.served = []
        self.owners = {}
        try:
            self._handshake(deadline, wire)
        except (SessionError, TransportError) as exc:
            raise self._start_failed(exc) from None
        self._start_failures = 0
        return self.transport

    def _start_failed(self, exc: SessionError | TransportError) -> SessionError:
        """End a process that did not register; after too many in a row, give the SDK up.

        The last failure's stderr tail is kept for every later row: it is the only clue left.
        """
        error = self._ended(exc, "registration handshake failed")
        self._start_failures += 1
        if self._start_failures >= MAX_CONSECUTIVE_START_FAILURES:
            self._unavailable = f"{error.reason} ({self._start_failures} attempts in a row)"
            self._unavailable_stderr = error.stderr
        return error

    def _ended(self, exc: SessionError | TransportError, what: str) -> SessionError:
        """End the process after `exc`; the error to raise, with the stderr tail and exit status."""
        detail = exc.reason if isinstance(exc, SessionError) else _transport_reason(exc)
        reason, stderr = self.end(f"{what}: {detail}", hung=isinstance(exc, TransportTimeout))
        if isinstance(exc, StrayAnswer):
            return exc.restated(reason, stderr)
        return SessionError(reason, stderr)

    def end(self, reason: str, *, hung: bool = False) -> tuple[str, str]:
        """End the process after an error; return the reason to report and the stderr tail.

        The process is killed before its stderr is read, so the drain has caught up with what
        it wrote just before misbehaving. If it had already exited on its own, the reason says
        with which status: for a hang, that means something it started holds its output.
        """
        note = self.transport.exit_note(hung=hung) if self.transport is not None else None
        stderr = self.discard()
        return with_note(reason, note), stderr

    def exit_status(self) -> int | None:
        """The current host's own exit status, if it ended (None when unknown or running)."""
        return self.transport.exit_status() if self.transport is not None else None

    def discard(self) -> str:
        """Kill the process (after a crash, hang or protocol break); the next case respawns.

        Returns its stderr tail, read once the process group is dead and the drain has finished.
        """
        transport, self.transport = self.transport, None
        self._outbox = []
        self._pending_reset = None
        if transport is None:
            return ""
        transport.close()
        return transport.stderr_tail()

    def late_frame(
        self, wait: float = LATE_FRAME_WAIT_SECONDS, *, closing: bool = False
    ) -> StrayAnswer | None:
        """A frame the host sends unasked within `wait` seconds after the last case, or None.

        Called before shutdown, so a second answer to the session's last case is noticed (a
        later case would have read it). Transport failures here are not the cases' business.

        `closing` (the end of a session): send `conform.shutdown` first where the host's output
        ends with the host, and stop listening when it ends: a host that has exited writes
        nothing more, so a prompt host does not cost the whole window, while one that writes a
        copy before it exits (a timer it lets finish) is still caught. An answer to the shutdown
        itself is no case's second answer and is passed over.
        """
        if self.transport is None or self._pending_reset is not None:
            return None
        until = time.monotonic() + wait
        closing = closing and self.transport.output_ends_with_host
        try:
            self.flush(until)
            if closing:
                self.transport.send(_SHUTDOWN, until)
                self._shutdown_sent = True
            while True:
                payload = self.transport.listen(until)
                try:
                    envelope = decode(payload)
                except SessionError as exc:
                    return StrayAnswer(f"after its last case it {exc.reason}", None, None, payload)
                if not (closing and envelope.get("id") == _SHUTDOWN_ID):
                    return StrayAnswer.extra(payload, envelope, word="unsolicited")
        except TransportError:
            return None

    def shutdown(self, deadline: float | None = None) -> None:
        """Send `conform.shutdown` (unless `late_frame` did), let the host exit, and make sure
        all it started is gone.

        Bounded whatever the host does: the send and the wait end by `deadline` (at most
        SHUTDOWN_WAIT_SECONDS from now), then the transport stops the host for good.
        """
        transport, self.transport = self.transport, None
        self._outbox = []
        self._pending_reset = None
        sent, self._shutdown_sent = self._shutdown_sent, False
        if transport is None:
            return
        now = time.monotonic()
        until = now + SHUTDOWN_WAIT_SECONDS if deadline is None else min(deadline, now + 1.0)
        if not sent:
            try:
                transport.send(_SHUTDOWN, until)
            except TransportError:
                pass
        transport.close(wait=max(0.0, until - time.monotonic()))

    def note_served(self, result: CaseResult) -> None:
        """`result`'s case was served by the current process: index its exchange ids."""
        self.served.append(result)
        owners = self.owners
        for ident in result.exchange_ids:
            owners[ident] = result if owners.get(ident, result) is result else None

    def stderr_tail(self) -> str:
        return self.transport.stderr_tail() if self.transport is not None else ""

    def clear_stderr(self) -> None:
        if self.transport is not None:
            self.transport.stderr.clear()

    # ----------------------------------------------------------------- frames

    def send(
        self,
        payload: bytes,
        deadline: float | None,
        wire: WireLog | None = None,
        ident: str | None = None,
    ) -> None:
        """Queue a frame; queued frames are written together before the next receive.

        A host serves one frame at a time in order (§12.1), so writing ahead is safe and saves
        a round trip per case (the reset's ack is read when the script first reads). `ident`,
        the frame's exchange id, is noted in the case's wire log for attributing strays.
        """
        if wire is not None:
            wire.sent(payload)
            if ident is not None:
                wire.ids.append(ident)
        self._outbox.append(payload)
        if deadline is not None and (
            self._outbox_deadline is None or deadline < self._outbox_deadline
        ):
            self._outbox_deadline = deadline

    def flush(self, deadline: float | None) -> None:
        """Write every queued frame (one system call for a subprocess transport).

        The write ends by the earliest deadline given to `send` for a queued frame or here.
        """
        assert self.transport is not None
        if not self._outbox:
            return
        outbox, self._outbox = self._outbox, []
        queued, self._outbox_deadline = self._outbox_deadline, None
        if queued is not None and (deadline is None or queued < deadline):
            deadline = queued
        self.transport.send_many(outbox, deadline)

    def receive(self, deadline: float | None, wire: WireLog | None = None) -> bytes:
        """Flush, collect a pending reset ack, then return the next frame from the SDK."""
        assert self.transport is not None
        self.flush(deadline)
        if self._pending_reset is not None:
            ident, self._pending_reset = self._pending_reset, None
            self._check_ack(ident, self._receive(deadline, wire))
        return self._receive(deadline, wire)

    def nothing_waiting(self) -> bool:
        """True when the SDK has surely sent nothing more (asked without waiting or raising).

        False means "maybe": call `receive` to find out (a transport that cannot tell says maybe).
        """
        if self.transport is None or self._outbox or self._pending_reset is not None:
            return False
        return not self.transport.ready()

    def _receive(self, deadline: float | None, wire: WireLog | None) -> bytes:
        payload = self.transport.receive(deadline)  # type: ignore[union-attr]
        if wire is not None:
            wire.received(payload)
        return payload

    def _check_ack(self, ident: str, payload: bytes) -> None:
        """The answer to reset `ident` must be its `conform.ack` (bytes compared first)."""
        if fastpath.enabled() and spelled_as(payload, _ACK_TEMPLATES, ident):
            return
        answer = self._answer_to(ident, payload)
        if answer.get("kind") != "conform.ack":
            raise SessionError(
                f"answered conform.reset with {answer.get('kind')!r}, not conform.ack"
            )

    def request(
        self, kind: str, body: dict, deadline: float | None, wire: WireLog | None
    ) -> tuple[str, dict]:
        """Send a bench request with a fresh id; return (id, the answer) after checking its id."""
        ident = self._next_id(kind)
        self.send(encode_frame(kind, body, ident), deadline, wire, ident)
        return ident, self.expect_answer(ident, deadline, wire)

    def expect_answer(self, ident: str, deadline: float | None, wire: WireLog | None) -> dict:
        assert self.transport is not None
        self.flush(deadline)
        return self._answer_to(ident, self._receive(deadline, wire))

    @staticmethod
    def _answer_to(ident: str, payload: bytes) -> dict:
        """Decode an answer that must carry `ident` (§12.2)."""
        envelope = decode(payload)
        if envelope.get("id") != ident:
            raise StrayAnswer.unexpected(payload, envelope, ident)
        return envelope

    def reset(self, deadline: float | None, wire: WireLog | None = None) -> None:
        """Queue `conform.reset` before a case; its `conform.ack` is checked at the next receive."""
        ident = self._next_id("conform.reset")
        self.send(_RESET_TEMPLATE % ident.encode("ascii"), deadline, wire, ident)
        self._pending_reset = ident
        if self.transport is not None and self.transport.writes_ahead:
            self.flush(deadline)  # the endpoint resets while the case's script is built

    # ----------------------------------------------------------------- handshake

    def _handshake(self, deadline: float | None, wire: WireLog | None) -> None:
        """§12.1 step 2: register, acknowledge exactly the offer, see `registered`."""
        body = {
            "scope": dict(CONFORM_SCOPE),
            "release_id": CONFORM_RELEASE_ID,
            "instance_id": CONFORM_INSTANCE_ID,
        }
        ident, register = self.request("conform.register", body, deadline, wire)
        if register.get("kind") != "register":
            raise SessionError(
                f"answered conform.register with {register.get('kind')!r}, not register"
            )
        self.handshake_problems = [str(v) for v in self._validate(register)]
        register_body = register.get("body")
        offered = register_body.get("capabilities") if isinstance(register_body, dict) else None
        if not isinstance(offered, list) or not all(isinstance(c, str) for c in offered):
            raise SessionError("its register frame has no capabilities array of strings")
        self.version = negotiated_version(register_body.get("versions"))
        ack = {
            "version": self.version,
            "capabilities": list(offered),
            "required_capabilities": [],
        }
        self.send(encode_frame("register_ack", ack, ident), deadline, wire, ident)
        outcome = self.expect_answer(ident, deadline, wire)
        status = (
            outcome.get("body", {}).get("status") if isinstance(outcome.get("body"), dict) else None
        )
        if outcome.get("kind") != "conform.registration_outcome" or status != "registered":
            raise SessionError(
                f"expected conform.registration_outcome registered, got {outcome.get('kind')!r} "
                f"{json.dumps(outcome.get('body'))[:300]}"
            )
        self.capabilities = frozenset(offered) | self.transport.capabilities()  # type: ignore[union-attr]
        self.register_body = register_body  # type: ignore[assignment]

    def _validate(self, envelope: dict) -> Sequence[object]:
        if self._validator is None:
            from fakepeer.protocol.schema import validate_message

            self._validator = validate_message
        return self._validator(envelope)

    def _next_id(self, kind: str) -> str:
        self._counter += 1
        return f"bench.{kind.removeprefix('conform.')}#{self._counter}"


def late_window(session: SdkSession, *, at_end: bool = False) -> float:
    """How long to listen for a late copy of an answer: four times the mean case of the
    session's latest cases (a slow host's copy comes late too), within the bounds for the end
    of a session (`at_end`) or for a discard mid-run."""
    recent = session.served[-PACE_CASES:]
    mean = sum(result.pace for result in recent) / len(recent) if recent else 0.0
    if at_end:
        return min(LATE_FRAME_MAX_SECONDS, max(LATE_FRAME_WAIT_SECONDS, 4.0 * mean))
    return min(DISCARD_WAIT_MAX_SECONDS, max(DISCARD_WAIT_SECONDS, 4.0 * mean))


def with_note(reason: str, note: str | None) -> str:
    """Add the transport's note on how the host ended by itself, unless the reason says it.

    A crash report already names the exit status; for a hang it is the real clue.
    """
    if note is None:
        return reason
    said = note.split("already ", 1)[-1].split(",", 1)[0].removeprefix("been ")
    if said in reason:
        return reason
    return f"{reason}; {note}"


def _transport_reason(exc: BaseException) -> str:
    if isinstance(exc, TransportError):
        return f"{exc.reason}: {exc.detail}" if exc.detail != exc.reason else exc.reason
    return str(exc)
