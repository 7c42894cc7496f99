"""Request-response HTTP to an SDK endpoint (docs/protocol.md "HTTP", D-HTTP-*).

One envelope per POST body, its answer envelope in the response body (200), no answer as 204.
Frames the session queues are POSTed in order over one keep-alive connection (`httpwire`), one
request at a time (never pipelined: RFC 9112 9.3.2 asks a client not to pipeline after a POST),
each request and its whole response bounded by the caller's deadline. A plain request is
written as soon as the connection is free (when it is queued, or when the response before it
has been read), so the endpoint works on it while the bench checks the answer before it; a
request with a fault is written when its answer is asked for, as it always was. Anything
but a 200 with a JSON envelope or an empty 204 is not a protocol answer and ends the session,
as a framing fault does on a framed stream. Loopback only: the bench never sends a request
anywhere but 127.0.0.1.

`--sdk http+cmd:COMMAND` starts COMMAND (contained like any host, see `process`), gives it a
fresh secret in RYUSEN_CONFORM_HTTP_SECRET and reads the endpoint URL from its first stdout
line; `--sdk http://127.0.0.1:PORT/PATH` uses an endpoint that is already running (signed when
RYUSEN_CONFORM_HTTP_SECRET is set in the bench's environment).
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from fakepeer.transport import httpauth
from fakepeer.transport.base import Transport
from fakepeer.transport.errors import NoAnswer, TransportClosed, TransportError, TransportTimeout
from fakepeer.transport.httprequest import (
    SignedRequests,
    hand_written_body,
    hand_written_head,
    request_parts,
)
from fakepeer.transport.httpwire import Link, Response
from fakepeer.transport.payload import FAULTS as PAYLOAD_FAULTS
from fakepeer.transport.payload import HttpPayload  # noqa: F401 - its old home, re-exported
from fakepeer.transport.process import CommandError, SubprocessTransport, parse_command

#: The `--sdk` prefix of a host the bench starts and reaches over HTTP.
COMMAND_PREFIX = "http+cmd:"
#: The `--sdk` prefix of an endpoint that is already running.
URL_PREFIX = "http://"
#: The only address the bench sends a request to.
LOOPBACK = "127.0.0.1"
#: How long a started host has to print its URL when the request that needs it has no deadline.
STARTUP_SECONDS = 10.0
#: Longest first line (the URL and its capability words) read from a started host.
MAX_URL_LINE = 4096
#: The transport capability every HTTP endpoint has: fixtures of the HTTP mapping need it.
HTTP_CAPABILITY = "http"
#: A fault a fixture asks the transport to commit on one request (docs/fixtures.md "HTTP").
FAULTS = PAYLOAD_FAULTS
#: Faults of the model server (lifecycle `http_502`, ...): the request reaches the endpoint and
#: is answered, but what comes back is a generic status, a timeout or a reset (D-HTTP-STATUS).
INJECTED = {
    "http_502": "answered HTTP 502 Bad Gateway in front of the endpoint",
    "http_503": "answered HTTP 503 Service Unavailable (Retry-After: 1) in front of the endpoint",
    "http_timeout": "sent no HTTP response before the proxy's deadline",
    "http_reset": "reset the connection before the answer",
}


def parse_url(url: str) -> tuple[str, int, str]:
    """(host, port, path) of a loopback endpoint URL; CommandError for anything else."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise CommandError(f"the endpoint {url!r} is not an http:// URL")
    try:
        port = parts.port
    except ValueError:
        raise CommandError(f"the endpoint {url!r} has an invalid port") from None
    if parts.hostname != LOOPBACK:
        raise CommandError(
            f"the endpoint {url!r} is not on {LOOPBACK}: the bench sends requests to the "
            "loopback address only"
        )
    if port is None or parts.query or parts.fragment or parts.username:
        raise CommandError(f"the endpoint {url!r} must be http://{LOOPBACK}:PORT/PATH")
    return LOOPBACK, port, parts.path or "/"


class HttpTransport(Transport):
    """Frames as POST requests to one endpoint; answers queued from the response bodies."""

    writes_ahead = True

    def __init__(
        self,
        url: str | None,
        *,
        secret: str | None = None,
        capabilities: frozenset[str] = frozenset(),
        process: SubprocessTransport | None = None,
    ) -> None:
        super().__init__()
        #: None until a started host's first stdout line names it (`_reach`).
        self.url = url
        self.host, self.port, self.path = parse_url(url) if url is not None else (LOOPBACK, 0, "/")
        self.secret = secret
        self._capabilities = capabilities | {HTTP_CAPABILITY}
        self.process = process
        if process is not None:
            self.stderr = process.stderr
            # a started host's connection ends when it exits (after `conform.shutdown`)
            self.output_ends_with_host = True
        self._link: Link | None = None
        #: A request written whose response is still to be read (at most one: no pipelining).
        self._in_flight = False
        #: An error writing a request ahead, raised when its answer is asked for.
        self._failed: TransportError | None = None
        #: A response no request asked for was just read: nothing is written ahead until the
        #: session has read it (a request it came before is sent only when asked for).
        self._hold = False
        self._outbox: deque[bytes] = deque()
        self._answers: deque[bytes] = deque()
        self._signed = SignedRequests()
        self._closed = False

    # ----------------------------------------------------------------- the contract

    def send(self, payload: bytes, deadline: float | None = None) -> None:
        """Queue one frame; a plain one is written at once when the connection is free."""
        self.send_many((payload,), deadline)

    def send_many(self, payloads: Sequence[bytes], deadline: float | None = None) -> None:
        self._check_open()
        self._outbox.extend(payloads)
        self._write_ahead(deadline)

    def receive(self, deadline: float | None = None) -> bytes:
        """POST queued frames in order until one is answered with an envelope."""
        self._check_open()
        while not self._answers:
            if not self._busy():
                if self._link is not None and self._link.unasked() == "data":
                    return self._read_unasked(self._link, deadline)
                raise NoAnswer("every request sent was answered 204 (no envelope)")
            self._post_next(deadline)
        if self._link is None or self._link.responses > 1:
            self._write_ahead(deadline)
        return self._answers.popleft()

    def listen(self, deadline: float | None = None) -> bytes:
        """POST what is queued; then wait until `deadline` for a response the endpoint writes
        unasked (a second answer), or for it to close the connection (a started host that
        exits on `conform.shutdown` closes it: the wait ends then)."""
        self._check_open()
        while not self._answers and self._busy():
            self._post_next(deadline)
        if self._answers:
            return self._answers.popleft()
        link = self._link
        if link is None or not link.wait_unasked(deadline):
            raise TransportTimeout("wrote nothing unasked")
        if link.unasked() == "closed":
            self._drop_connection()
            raise TransportClosed("closed its connection")
        return self._read_unasked(link, deadline)

    def _read_unasked(self, link: Link, deadline: float | None) -> bytes:
        try:
            self._unasked(link, deadline)
        except _Unasked as unasked:
            return unasked.answer
        raise AssertionError("_unasked always raises")  # pragma: no cover

    def _post_next(self, deadline: float | None) -> None:
        """Read the response to the request written ahead, or POST the next queued frame and
        read its response; queue its answer (or an unasked response's)."""
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed
        self._hold = False
        try:
            if self._in_flight:
                answer = self._finish(deadline)
            else:
                try:
                    answer = self._exchange(self._outbox[0], deadline)
                except _Unasked:
                    raise
                except BaseException:
                    self._outbox.popleft()  # a request written is never sent again
                    raise
                self._outbox.popleft()
        except _Unasked as unasked:  # read before the request was written: it stays queued
            self._answers.append(unasked.answer)
            self._hold = True
            return
        if answer is not None:
            self._answers.append(answer)

    def _write_ahead(self, deadline: float | None) -> None:
        """Write the next queued request now when the connection is free and it is plain (a
        fault is committed when its answer is asked for); an error is raised with that answer.
        Never before a started host has named its URL, nor without a deadline: writing ahead
        must not wait where the request itself would not have. Right after a response, only on
        a connection that has outlived one already: an endpoint that closes after each response
        without saying so must not be sent a request its closing connection would lose."""
        if self._in_flight or self._failed is not None or self._hold or not self._outbox:
            return
        if deadline is None or self.url is None:
            return
        if getattr(self._outbox[0], "fault", None) is not None:
            return
        try:
            self._begin(self._outbox[0], deadline)
        except _Unasked as unasked:  # the endpoint wrote first: read as the next frame
            self._answers.append(unasked.answer)
            self._hold = True
            return
        except TransportError as exc:
            self._failed = exc
        self._outbox.popleft()

    def _busy(self) -> bool:
        """A request queued or written ahead, or an error to report for one."""
        return bool(self._outbox) or self._in_flight or self._failed is not None

    def ready(self) -> bool:
        """Something to read or POST, or bytes the endpoint wrote unasked (checked at once)."""
        if self._closed or self._answers or self._busy():
            return True
        return self._link is not None and self._link.unasked() == "data"

    def capabilities(self) -> frozenset[str]:
        return self._capabilities

    def close(self, wait: float = 0.0) -> None:
        """POST what is still queued (a `conform.shutdown`) within `wait`, then end the host.

        An endpoint the bench did not start is never sent `conform.shutdown`: it is not ours.
        """
        if self._closed:
            return
        until = time.monotonic() + wait
        if self.process is not None and wait > 0:
            try:
                while self._busy():
                    self._post_next(until)
            except TransportError:
                pass
        self._closed = True
        self._outbox.clear()
        self._drop_connection()
        if self.process is not None:
            self.process.close(wait=max(0.0, until - time.monotonic()))

    def exit_status(self) -> int | None:
        return self.process.exit_status() if self.process is not None else None

    def exit_note(self, *, hung: bool = False) -> str | None:
        return self.process.exit_note() if self.process is not None else None

    def stderr_tail(self) -> str:
        return self.process.stderr_tail() if self.process is not None else ""

    # ----------------------------------------------------------------- one request

    def _exchange(self, payload: bytes, deadline: float | None) -> bytes | None:
        """POST one frame; its answer envelope, or None for a 204."""
        fault = getattr(payload, "fault", None)
        body = bytes(payload)
        if fault is not None and fault.injected:
            withheld = self._exchange(body, deadline)
            self._drop_connection()  # a new connection next, as after a real failure
            raise InjectedFailure(INJECTED[fault.injected], withheld)
        body, headers = request_parts(body, fault, self.secret, self._signed)
        if fault is not None and fault.framing:
            return self._hand_written(body, headers, fault.framing, deadline)
        if fault is not None and (fault.has("replay") or fault.has("new_connection")):
            self._drop_connection()
        self._write(body, headers, deadline)
        return self._finish(deadline)

    def _begin(self, payload: bytes, deadline: float | None) -> None:
        """Write one plain request; `_finish` reads its response."""
        self._write(*request_parts(bytes(payload), None, self.secret, self._signed), deadline)

    def _write(self, body: bytes, headers: dict[str, str], deadline: float | None) -> None:
        link = self._connect(deadline)
        try:
            link.write(self._request(headers, body), deadline)
        except TransportError:
            self._drop_connection()
            raise
        self._in_flight = True

    def _finish(self, deadline: float | None) -> bytes | None:
        """Read the response to the request written; its answer envelope, or None for a 204."""
        link = self._link
        assert link is not None and self._in_flight
        self._in_flight = False
        try:
            response = link.response(deadline)
        except TransportError:
            self._drop_connection()
            raise
        if response.closes:
            self._drop_connection()
        try:
            return _answer(response)
        except TransportError:
            self._drop_connection()
            raise

    def _request(self, headers: dict[str, str], body: bytes) -> bytes:
        """The whole request, head and body, for one write."""
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{lines}"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("latin-1") + body

    def _hand_written(
        self, body: bytes, headers: dict[str, str], framing: str, deadline: float | None
    ) -> bytes | None:
        """A request with framing of its own (an announced length over the limit, or no
        length at all), on a connection of its own, and its answer.

        The endpoint must answer from the headers alone (D-HTTP-LIMITS), without waiting for
        bytes that never come; the connection is not reused.
        """
        self._reach(deadline)
        self._drop_connection()
        head = hand_written_head(self.path, self.host, self.port, body, headers, framing)
        link = Link(self.host, self.port, deadline)
        try:
            link.write(head + hand_written_body(body, framing), deadline)
            response = link.response(deadline)
        finally:
            link.close()
        return _answer(response)

    def _connect(self, deadline: float | None) -> Link:
        """The open connection, or a new one; one the endpoint closed while idle is replaced.

        Bytes the endpoint wrote that no request asked for (a second response) are read and
        raised before anything is written: the request is not sent at all then.
        """
        self._reach(deadline)
        link = self._link
        if link is not None:
            state = link.unasked()
            if state == "data":
                self._unasked(link, deadline)
            elif state == "closed":
                self._drop_connection()
                link = None
        if link is None:
            link = self._link = Link(self.host, self.port, deadline)
        return link

    def _unasked(self, link: Link, deadline: float | None) -> None:
        """Read the response no request asked for; its envelope is queued as a frame the
        session reads (a second answer, as on a framed stream), anything else ends the session."""
        try:
            response = link.response(deadline)
        except TransportError as exc:
            self._drop_connection()
            raise type(exc)(f"wrote bytes no request asked for, then {exc.detail}") from None
        if response.closes:
            self._drop_connection()
        try:
            answer = _answer(response)
        except HttpAnswerError as exc:
            self._drop_connection()
            raise SecondResponse(f"{exc.detail}, a second response to one request") from None
        if answer is None:
            self._drop_connection()
            raise SecondResponse("answered one request twice: a second response (204) came")
        raise _Unasked(answer)

    def _reach(self, deadline: float | None) -> None:
        """Learn a started host's URL (and capabilities) from its first stdout line, once."""
        if self.url is not None:
            return
        assert self.process is not None
        until = time.monotonic() + STARTUP_SECONDS if deadline is None else deadline
        url, *words = _first_line(self.process, until).split()
        self.url = url
        self.host, self.port, self.path = parse_url(url)
        self._capabilities |= frozenset(w for w in words if w == httpauth.CAPABILITY)

    def _drop_connection(self) -> None:
        self._in_flight = False  # a response still to come is lost with its connection
        link, self._link = self._link, None
        if link is not None:
            link.close()

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError("the HTTP transport was already closed")


def _answer(response: Response) -> bytes | None:
    """The envelope a response carries, None for a 204; a generic status is no answer."""
    status, data = response.status, response.body
    if status == 204:
        length = response.header("content-length") or "0"
        if data or length != "0":
            size = len(data) or length
            raise HttpAnswerError(f"answered 204 No Content with a {size}-byte body")
        return None
    if status != 200:
        raise HttpAnswerError(
            f"answered HTTP {status} {response.reason}".rstrip()
            + ": a generic status, not a protocol answer (D-HTTP-STATUS)"
        )
    content_type = (response.header("content-type") or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise HttpAnswerError(
            f"answered 200 with Content-Type {content_type or '(none)'!r}, not application/json"
        )
    if not data:
        raise HttpAnswerError("answered 200 with an empty body: the answer envelope is the body")
    return data


class HttpAnswerError(TransportError):
    """A response that is not a protocol answer (D-HTTP-STATUS)."""

    reason = "answered without an envelope"


class SecondResponse(HttpAnswerError):
    """A response no request asked for, without an envelope to blame a case by."""

    reason = "answered twice"


class _Unasked(Exception):
    """An envelope in a response no request asked for: the next frame the session reads."""

    def __init__(self, answer: bytes) -> None:
        super().__init__("unasked")
        self.answer = answer


class InjectedFailure(HttpAnswerError):
    """A generic status, timeout or reset the bench put in place of the endpoint's answer.

    The endpoint did answer (`withheld`, never read as an answer: the outcome is unknown to
    the server); the fault was the bench's, so the transport stays usable after it.
    """

    reason = "outcome unknown"

    def __init__(self, detail: str, withheld: bytes | None) -> None:
        super().__init__(detail)
        self.withheld = withheld


# --------------------------------------------------------------------- starting a host


def start_command(argv: Sequence[str], cwd: Path | None = None) -> HttpTransport:
    """Start a host that serves HTTP; its URL is read from its first stdout line when the first
    request is sent, within that request's deadline (so `--start-timeout` and `--max-time`
    bound the wait, and the host's start overlaps what the bench does meanwhile).

    The line is `http://127.0.0.1:PORT/PATH [CAPABILITY ...]`: a host that authenticates
    requests adds `request_authentication` (D-HTTP-START).
    """
    secret = httpauth.new_secret()
    process = SubprocessTransport(argv, cwd=cwd, env={httpauth.SECRET_VARIABLE: secret})
    return HttpTransport(None, secret=secret, process=process)


class HostStartError(TransportError):
    """A started host printed no usable endpoint URL: it cannot be reached."""

    reason = "did not start its HTTP endpoint"


def _first_line(process: SubprocessTransport, deadline: float) -> str:
    """The host's first stdout line; HostStartError (TransportTimeout past `deadline`) when
    none comes or it names no loopback endpoint, with the host's last stderr line."""
    try:
        line = _read_line(process, deadline)
        parse_url(line.split()[0])
    except (CommandError, HostStartError) as exc:
        tail = process.stderr_tail().strip().splitlines()
        clue = f" (stderr: {tail[-1][:200]})" if tail else ""
        detail = f"{exc.detail if isinstance(exc, TransportError) else exc}{clue}"
        raise (type(exc) if isinstance(exc, HostStartError) else HostStartError)(detail) from None
    return line


def _read_line(process: SubprocessTransport, deadline: float) -> str:
    fd = process.process.stdout.fileno()  # type: ignore[union-attr]
    started = time.monotonic()
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            waited = time.monotonic() - started
            raise _StartTimeout(f"printed no endpoint URL within {waited:.3g} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, MAX_URL_LINE)
        except BlockingIOError:
            continue
        if not chunk:
            raise HostStartError("ended its output before printing its endpoint URL")
        data += chunk
        if len(data) > MAX_URL_LINE:
            raise HostStartError("printed a first line longer than 4096 bytes, not a URL")
    line = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if not line:
        raise HostStartError("printed an empty first line instead of its endpoint URL")
    return line


class _StartTimeout(HostStartError, TransportTimeout):
    """No URL line by the deadline: a hang, which the run's bound may have cut short."""

    reason = "hung"


def command_transport_factory(spec: str, cwd: Path | None = None) -> tuple[list[str], object]:
    """The argv and a factory for `http+cmd:COMMAND` (CommandError when it cannot start)."""
    argv = parse_command(spec.removeprefix(COMMAND_PREFIX), cwd)
    return argv, lambda: start_command(argv, cwd)


def url_transport_factory(url: str) -> object:
    """A factory for an endpoint already running at `url` (CommandError for a bad URL)."""
    parse_url(url)
    secret = os.environ.get(httpauth.SECRET_VARIABLE) or None
    capabilities = frozenset({httpauth.CAPABILITY}) if secret else frozenset()
    return lambda: HttpTransport(url, secret=secret, capabilities=capabilities)
