"""The model server's line to a conformance host, over an `SdkSession` (§12).

It sends invokes and control messages, checks every answer strictly (its id, its kind's schema),
and carries out the transport-level faults: reading and dropping an answer (lost), writing one
request twice (duplicate), killing the host right after writing a request (crash), and
restarting the host between invocations. After a restart the scenario's environment (ambient
state, admission) is applied again: it belongs to the deployment, not to one process.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from fakepeer.protocol.encode import encode_envelope, encode_frame
from fakepeer.protocol.manifest import ManifestStore
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.protocol.version import is_supported
from fakepeer.session.sdk import SdkSession, SessionError, StrayAnswer, decode, late_window
from fakepeer.session.wire import WireLog
from fakepeer.transport.errors import NoAnswer, TransportError, TransportTimeout

#: Seconds a host restart may take (as `session.case.STARTUP_SECONDS`; not counted in the case).
STARTUP_SECONDS = 10.0
#: Seconds one exchange with the host may take when the caller gives no deadline.
EXCHANGE_SECONDS = 10.0


class InvokeEncoder:
    """Encodes invokes reusing the bytes of what every invoke of a run repeats.

    Each invoke carries the run's input and its whole accepted history (§9.1), so encoding the
    frame afresh costs time that grows with the run (8 ms for a 1,000-step program and history).
    The input and each accepted history entry are encoded once, keyed by identity (the server
    never changes them once accepted: `RunState.settle`), and held here so the identity stays
    theirs. The frame is the same JSON text `encode_envelope` writes.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, bytes]] = {}

    def _reused(self, value: object) -> bytes:
        known = self._known.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        data = _json_bytes(value)
        self._known[id(value)] = (value, data)
        return data

    def encode(self, ident: str, body: dict) -> bytes:
        members = []
        for key, value in body.items():
            if key == "input":
                data = self._reused(value)
            elif key == "history":
                data = b"[" + b",".join(self._reused(entry) for entry in value) + b"]"
            else:
                data = _json_bytes(value)
            members.append(_json_bytes(key) + b":" + data)
        head = encode_frame("invoke", {}, ident).removesuffix(b"{}}")  # ends in `"body":`
        return head + b"{" + b",".join(members) + b"}}"


def _json_bytes(value: object) -> bytes:
    """`value` as `encode_envelope` writes it (compact UTF-8, a lone surrogate escaped)."""
    return encode_envelope(value)  # type: ignore[arg-type]


#: One numbering for every exchange the model server opens in this process: two scenarios (or
#: two plays of one) never reuse an id, so a late or cached answer cannot pass for another's.
_EXCHANGES = itertools.count(1)


class HostFault(Exception):
    """The host broke the protocol or the session (crash, hang, garbage, wrong frame)."""


class BoundReached(HostFault):
    """An exchange was cut by the case's (the run's) own time bound, not by the host's timeout.

    Where that bound is the caller's choice (`simulate --max-time`), the run was stopped: the
    host broke nothing. A case that set no such bound sees it as the HostFault it is.
    """


class HostLink:
    """Exchanges with one conformance host; raises HostFault when the host misbehaves."""

    def __init__(
        self,
        session: SdkSession,
        *,
        wire: WireLog | None = None,
        deadline: float | None = None,
        validator: Callable[[dict], list] | None = None,
        scope: str = "server",
        limit: float | None = None,
    ) -> None:
        """`scope` begins every exchange id (`<scope>.invoke#<n>`): a lifecycle case's id, so
        its frames are told from every other case's."""
        self.session = session
        self.scope = scope
        self.wire = wire
        self.case_deadline = deadline
        #: Seconds one exchange may take (`simulate --timeout`).
        self.exchange_seconds = EXCHANGE_SECONDS
        #: Nothing, restarts included, goes past this (the run's --max-time): a restart gets a
        #: start's allowance (as between cases) and extends `case_deadline` up to it only.
        self.limit = limit
        self._validator = validator
        self._ids = _EXCHANGES
        self._invokes = InvokeEncoder()
        self.ambient: dict[str, str] = {}
        self.admission_open = True
        self.restarts = 0
        self.last_request_id = ""
        #: What came back in place of the last `http_*` fault's answer (a generic status ...).
        self.generic_status: str | None = None
        #: The answer the last `lost_answer` invoke read and dropped (the server checks its trace).
        self.dropped_answer: dict | None = None
        #: Called after every (re)start with the host's `register` body (the server records it).
        self.on_start: Callable[[dict], None] | None = None

    # ----------------------------------------------------------------- plumbing

    def _deadline(self) -> float:
        own = time.monotonic() + self.exchange_seconds
        return own if self.case_deadline is None else min(own, self.case_deadline)

    def _fault(self, exc: BaseException, bound: float | None = None) -> HostFault:
        """The HostFault for a failed exchange: BoundReached when it timed out at `bound` (by
        default the case's deadline), which cut it short, rather than at the host's own
        allowance for one exchange."""
        bound = self.case_deadline if bound is None else bound
        cut = (
            isinstance(exc, TransportTimeout)
            and not isinstance(exc, NoAnswer)
            and bound is not None
            and time.monotonic() >= bound
        )
        return (BoundReached if cut else HostFault)(_reason(exc))

    def _clipped(self, deadline: float) -> float:
        return deadline if self.limit is None else min(deadline, self.limit)

    def _validate(self, envelope: dict) -> list:
        if self._validator is None:
            from fakepeer.protocol.schema import validate_message

            self._validator = validate_message
        return list(self._validator(envelope))

    def _write(self, kind: str, body: dict, ident: str) -> None:
        if kind == "invoke":
            payload = self._invokes.encode(ident, body)
        else:
            payload = encode_frame(kind, body, ident)
        self.session.send(payload, self._deadline(), self.wire, ident)

    def _read(self, ident: str) -> dict:
        try:
            payload = self.session.receive(self._deadline(), self.wire)
            envelope = decode(payload)
        except (TransportError, SessionError) as exc:
            raise self._fault(exc) from None
        if envelope.get("id") != ident:
            raise HostFault(StrayAnswer.unexpected(payload, envelope, ident).reason)
        violations = self._validate(envelope)
        if violations:
            raise HostFault(
                f"a {envelope.get('kind')!r} frame that breaks its schema: {violations[0]}"
            )
        return envelope

    def _request(self, kind: str, body: dict) -> tuple[str, dict]:
        ident = f"{self.scope}.{kind.removeprefix('conform.')}#{next(self._ids)}"
        self._write(kind, body, ident)
        return ident, self._read(ident)

    def _control(self, kind: str, body: dict) -> None:
        _, answer = self._request(kind, body)
        if answer.get("kind") != "conform.ack":
            raise HostFault(f"answered {kind} with {answer.get('kind')!r}, not conform.ack")

    # ----------------------------------------------------------------- control

    def set_ambient(self, key: str, value: str) -> None:
        self.ambient[key] = value
        self._control("conform.set_ambient", {"key": key, "value": value})

    def set_admission(self, open_: bool) -> None:
        self.admission_open = open_
        self._control("conform.set_admission", {"open": open_})

    def publish(self, store: ManifestStore) -> dict:
        """Have the host publish its registry; activate it in `store`; the manifest body."""
        ident = f"{self.scope}.publish#{next(self._ids)}"
        self._write(
            "conform.publish", {"scope": dict(CONFORM_SCOPE), "expected_parent": None}, ident
        )
        publication = self._read(ident)
        if publication.get("kind") != "publish_manifest":
            raise HostFault(
                f"answered conform.publish with {publication.get('kind')!r}, not publish_manifest"
            )
        body = publication["body"]
        result = store.publish(CONFORM_SCOPE, body)
        kind = getattr(result, "kind", None)
        if kind is None:
            raise HostFault(f"its publication was refused: {result}")
        self._write(kind, result.to_body(), ident)
        outcome = self._read(ident)
        if outcome.get("kind") != "conform.publication_outcome":
            raise HostFault(f"expected conform.publication_outcome, got {outcome.get('kind')!r}")
        return body

    @property
    def register_body(self) -> dict | None:
        """The host's current `register` body (§7.1), once it registered."""
        return self.session.register_body

    def restart(self) -> None:
        """Shut the host down and start a new one (handshake included), environment re-applied.

        A frame the old host sent unasked (a second answer) is looked for first: discarding it
        unseen would let the case pass.
        """
        stray = self.session.late_frame(late_window(self.session))
        if stray is not None:
            raise HostFault(f"{stray.reason}, before the scenario restarted the host")
        self.session.shutdown(self.limit)
        self._start()

    def _start(self) -> None:
        self.restarts += 1
        started = time.monotonic()
        if self.limit is not None and started >= self.limit:
            raise BoundReached("could not restart the host: the case's time bound was reached")
        try:  # as between cases, (re)starting does not eat into the case's time (up to limit)
            self.session.ensure_started(self._clipped(started + STARTUP_SECONDS), self.wire)
        except (TransportError, SessionError) as exc:
            fault = self._fault(exc, self.limit)
            raise type(fault)(f"could not restart the host: {fault}") from None
        if self.case_deadline is not None:
            self.case_deadline = self._clipped(self.case_deadline + time.monotonic() - started)
        if self.on_start is not None and self.session.register_body is not None:
            self.on_start(self.session.register_body)
        for key, value in self.ambient.items():
            self._control("conform.set_ambient", {"key": key, "value": value})
        if not self.admission_open:
            self._control("conform.set_admission", {"open": False})

    def _generic_status(self, body: dict, ident: str, fault: str) -> tuple[None, None]:
        """The invoke reaches the endpoint, but a generic status (or a timeout, a reset) comes
        back in place of its answer: the outcome is unknown (D-HTTP-STATUS), as a lost answer.

        Only the HTTP transport can do this; the scenario needs capability `http`.
        """
        from fakepeer.transport.http import HTTP_CAPABILITY, HttpPayload, InjectedFailure

        transport = self.session.transport
        if transport is None or HTTP_CAPABILITY not in transport.capabilities():
            raise HostFault(f"the {fault} fault needs the HTTP transport (capability http)")
        self.session.send(
            HttpPayload(self._invokes.encode(ident, body), fault), self._deadline(), self.wire
        )
        try:
            self.session.receive(self._deadline(), self.wire)
        except InjectedFailure as exc:
            self.generic_status = exc.detail
            self.dropped_answer = decode(exc.withheld) if exc.withheld else None
            return None, None
        except (TransportError, SessionError) as exc:
            raise self._fault(exc) from None
        raise HostFault(f"the {fault} fault came back as an answer")

    def trace(self) -> list[dict]:
        """What the host's workflow did since the last trace (`conform.trace`, §12.4)."""
        from fakepeer.session.effects import TraceProblem, trace_events

        _, answer = self._request("conform.trace", {})
        if not is_supported(answer.get("version")):  # as an exchange fixture's trace answer
            raise HostFault(
                f"the conform.trace answer names no protocol version this bench speaks "
                f"({answer.get('version', 'no version')!r}; RFD 2: \u201cEvery request and "
                "response names a protocol version.\u201d)"
            )
        try:
            return trace_events(answer)
        except TraceProblem as exc:
            raise HostFault(str(exc)) from None

    # ----------------------------------------------------------------- invocations

    def invoke(self, body: dict, fault: str | None = None) -> tuple[dict | None, dict | None]:
        """Send one invoke; (its answer or None when lost, a duplicate's answer or None).

        `fault`: "lost_answer" reads the answer and drops it; "duplicate" writes the request
        twice and reads both answers; "crash" kills the host right after writing the request
        and starts a new one (the answer, if any, is never read).
        """
        ident = f"{self.scope}.invoke#{next(self._ids)}"
        self.last_request_id = ident
        self.dropped_answer = None
        if fault is not None and fault.startswith("http_"):
            return self._generic_status(body, ident, fault)
        if fault == "crash":
            self._write("invoke", body, ident)
            try:
                self.session.flush(self._deadline())
            except TransportError:
                pass
            self.session.discard()
            self._start()
            return None, None
        self._write("invoke", body, ident)
        if fault == "duplicate":
            self._write("invoke", body, ident)
        answer = self._read(ident)
        second = self._read(ident) if fault == "duplicate" else None
        if fault == "lost_answer":
            self.dropped_answer = answer
            return None, None
        return answer, second


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SessionError):
        return exc.reason
    if isinstance(exc, TransportError):
        return f"{exc.reason}: {exc.detail}" if exc.detail != exc.reason else exc.reason
    return str(exc)
