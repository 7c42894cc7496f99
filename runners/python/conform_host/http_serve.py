"""The conformance host over HTTP (docs/protocol.md "HTTP"), with the standard library only.

One envelope per POST body; the frame the host writes in answer is the response body (200),
none is a 204. The §12 host loop is unchanged: it takes each request's payload where it would
read a frame; what it writes until it asks for the next frame is that request's answer. Every
refusal (too large, unauthenticated, not JSON) is a `protocol_error` envelope with status 200,
never a bare status (D-HTTP-STATUS).

One thread serves everything (`Endpoint`): the host loop's own, which waits on the listening
socket, the open keep-alive connections and stdin at once, so a request reaches the host with
no hand-off between threads; each response is one write on a `TCP_NODELAY` socket.

Started as `conform --http`: binds 127.0.0.1 on a free port, prints its URL (and
`request_authentication` when RYUSEN_CONFORM_HTTP_SECRET gives it a secret) as its first stdout
line, logs to stderr, and exits on `conform.shutdown` or when its stdin ends.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import select
import socket
import sys
import threading
import time
from collections import OrderedDict
from http import HTTPStatus
from typing import Any

from ryusen_sdk import ProtocolError
from ryusen_sdk.answers import protocol_error
from ryusen_sdk.codec import encode_envelope

from .host import Host, Shutdown

log = logging.getLogger("ryusen.conform.http")

PATH = "/ryusen"
MAX_BODY_BYTES = 16 * 1024 * 1024
REPLAY_WINDOW_SECONDS = 300
SECRET_VARIABLE = "RYUSEN_CONFORM_HTTP_SECRET"
NO_ID = "-"


class HttpHost(Host):
    """The §12 host with requests for frames: `next_frame` ends one request's answer."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(None, None)  # type: ignore[arg-type]
        self.endpoint = endpoint
        self._written: list[bytes] = []
        self._serving: Handler | None = None

    def send(self, kind: str, frame_id: str, body: dict[str, Any]) -> None:
        log.debug("-> %s %s", kind, frame_id)
        self._written.append(encode_envelope(kind, frame_id, body))

    def next_frame(self) -> bytes:
        if self._pushed_back is not None:
            payload, self._pushed_back = self._pushed_back, None
            return payload
        self.finish()
        request = self.endpoint.next_request()
        if request is None:
            raise Shutdown()
        self._serving, payload = request
        return payload

    def finish(self) -> bool:
        """The request being served is answered completely: write what was written for it."""
        handler, self._serving = self._serving, None
        if handler is None:
            return False
        written, self._written = self._written, []
        handler.respond(written)
        return True


#: The forms D-HTTP-AUTH gives the three headers: anything else is a failed authentication
#: (protocol.unauthenticated), never a malformed request (D-HTTP-ORDER).
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_NONCE = re.compile(r"^[0-9a-f]{32}$")
_SIGNATURE = re.compile(r"^v1=[0-9a-f]{64}$")


class Guard:
    """Request authentication (D-HTTP-AUTH): HMAC-SHA256 over timestamp "." nonce "." body,
    a window of 300 s either way, and each nonce accepted once within it. Only a request that
    passes every check uses up its nonce: a forged one never spends the authentic one's."""

    def __init__(self, secret: str) -> None:
        self.secret = secret.encode("ascii")
        # in the order accepted (an OrderedDict forgets its oldest in constant time), so no
        # request walks every nonce kept
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def refusal(self, headers: Any, body: bytes) -> str | None:
        """Why the request is refused, or None when it is authentic, fresh and new."""
        timestamp = headers.get("Ryusen-Timestamp")
        nonce = headers.get("Ryusen-Nonce")
        signature = headers.get("Ryusen-Signature")
        if not timestamp or not nonce or not signature:
            return "unsigned request"
        if not _TIMESTAMP.match(timestamp) or not _NONCE.match(nonce):
            return "malformed authentication headers"
        if not _SIGNATURE.match(signature):
            return "malformed signature header"
        signed = f"{timestamp}.{nonce}.".encode("ascii") + body
        mac = "v1=" + hmac.new(self.secret, signed, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature.encode("utf-8", "replace"), mac.encode("ascii")):
            return "bad signature"
        now = time.time()
        if abs(now - int(timestamp)) > REPLAY_WINDOW_SECONDS:
            return "stale timestamp"
        with self._lock:
            while self._seen:  # oldest first: forget the expired, stop at the first kept
                oldest, when = next(iter(self._seen.items()))
                if now - when <= 2 * REPLAY_WINDOW_SECONDS:
                    break
                del self._seen[oldest]
            if nonce in self._seen:
                return "replayed request"
            self._seen[nonce] = now
        return None


def refusal_envelope(category: str, message: str) -> bytes:
    error = ProtocolError(category, "", message)
    answer = protocol_error(error.to_record())
    return encode_envelope(answer.kind, NO_ID, answer.body)


def length_refusal(headers: Any) -> bytes | None:
    """D-HTTP-ORDER step 1, from the headers alone: a request without a decimal length, or
    announcing more than 16 MiB, is refused before its body is read (D-HTTP-LIMITS)."""
    length = headers.get("Content-Length")
    if length is None or not length.isdigit():
        return refusal_envelope("protocol.malformed", "no Content-Length")
    if int(length) > MAX_BODY_BYTES:
        return refusal_envelope("protocol.limit_exceeded", "request too large")
    return None


def request_refusal(guard: Guard | None, headers: Any, body: bytes) -> bytes | None:
    """D-HTTP-ORDER steps 3 and 4, once the body is read: authentication (every request, of
    every kind), then the content type; the envelope itself is the host's to decode."""
    if guard is not None:
        why = guard.refusal(headers, body)
        if why is not None:
            log.warning("refused: %s", why)
            return refusal_envelope("protocol.unauthenticated", why)
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip()
    if content_type.lower() != "application/json":
        return refusal_envelope("protocol.malformed", "not application/json")
    return None


def response_for(written: list[bytes]) -> tuple[int, bytes, dict[str, str]]:
    """The HTTP response carrying what the host wrote for one request (D-HTTP-STATUS).

    One envelope: 200 with it as the body; none: 204. Never another status, whatever the
    envelope says (a refusal is an envelope too).
    """
    if len(written) > 1:
        log.error("wrote %d frames for one request; answering the first", len(written))
    if not written:
        return 204, b"", {}
    return 200, written[0], {"Content-Type": "application/json"}


class Headers(dict):
    """Request headers by lowercase name; `get` takes any spelling."""

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)


class Handler:
    """One request on one connection: the checks before the host sees it, and its response."""

    def __init__(
        self, connection: Connection, command: str, path: str, headers: Headers, keep: bool
    ) -> None:
        self.connection = connection
        self.command = command
        self.path = path
        self.headers = headers
        self.close_connection = not keep
        self.admitted: bytes | None = None

    def dispatch(self, guard: Guard | None) -> None:
        if self.command != "POST":
            self.close_connection = True
            self.send_error(501)
            return
        self.do_POST(guard)

    def do_POST(self, guard: Guard | None) -> None:  # noqa: N802
        if self.path != PATH:
            self.skip_body()
            self.send_error(404)
            return
        refused = length_refusal(self.headers)
        if refused is not None:  # from the headers alone: the body is never read (D-HTTP-LIMITS)
            self.close_connection = True
            self.respond([refused])
            return
        body = self.connection.read_body(int(self.headers.get("Content-Length")), self.headers)
        if body is None:  # the client left before its body was complete
            self.close_connection = True
            return
        refused = request_refusal(guard, self.headers, body)
        if refused is not None:
            self.respond([refused])
            return
        self.admitted = body  # a host serves one frame at a time (§12.1): it answers next

    def skip_body(self) -> None:
        """Read past a body the host does not look at; close when it cannot be skipped."""
        length = self.headers.get("Content-Length") or "0"
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self.close_connection = True
        elif self.connection.read_body(int(length), self.headers) is None:
            self.close_connection = True

    def send_error(self, status: int) -> None:
        self.connection.write(status, b"", {}, close=self.close_connection)

    def respond(self, written: list[bytes]) -> None:
        status, data, headers = response_for(written)
        self.connection.write(status, data, headers, close=self.close_connection)


#: Bytes asked of a socket per read: under the allocator's mmap threshold (128 KiB), so a read
#: does not map and unmap a fresh buffer each time.
READ_SIZE = 64 * 1024
#: Longest request head (request line and headers) an endpoint reads.
MAX_HEAD_BYTES = 64 * 1024
#: Seconds a client has to send the rest of a request body, or to take a response.
IO_SECONDS = 60.0
#: Seconds a connection closed after a refusal is still drained, so the client reads the
#: refusal before the unread rest of its request could reset the connection.
LINGER_SECONDS = 2.0


class Connection:
    """One client connection: its unread bytes, its requests' heads and bodies, its writes.

    The socket is non-blocking: the endpoint reads it when `poll` says so, and a body or a
    response that does not go at once waits on this socket alone, for IO_SECONDS at most.
    """

    def __init__(self, sock: socket.socket) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # one write, sent at once
        sock.setblocking(False)
        self.sock = sock
        self.buffer = bytearray()
        self.closing_since: float | None = None

    def fill(self) -> bool:
        """Read what the socket holds (it is readable); False at its end."""
        try:
            data = self.sock.recv(READ_SIZE)
        except BlockingIOError:
            return True
        except OSError:
            return False
        self.buffer += data
        return bool(data)

    def request_head(self) -> bytes | None:
        """A complete request head taken from the buffer, or None while it is incomplete."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise ValueError("request head too large")
            return None
        head = bytes(self.buffer[:end])
        del self.buffer[: end + 4]
        return head

    def read_body(self, length: int, headers: Headers) -> bytes | None:
        """The request body of `length` bytes (waiting for the rest); None when it never came."""
        if len(self.buffer) < length and (headers.get("Expect") or "").lower() == "100-continue":
            self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        while len(self.buffer) < length:
            if not self._wait(select.POLLIN):
                return None
            try:
                data = self.sock.recv(READ_SIZE)
            except BlockingIOError:
                continue
            except OSError:
                return None
            if not data:
                return None
            self.buffer += data
        body = bytes(self.buffer[:length])
        del self.buffer[:length]
        return body

    def write(self, status: int, data: bytes, headers: dict[str, str], *, close: bool) -> None:
        """The whole response in one write (D-HTTP-STATUS); `close` ends the connection after."""
        lines = [f"HTTP/1.1 {status} {_reason(status)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if status != 204:
            lines.append(f"Content-Length: {len(data)}")
        if close:
            lines.append("Connection: close")
        self.send("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + data)
        if close:
            self.closing_since = time.monotonic()
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view) :]
                continue
            except BlockingIOError:
                pass
            except OSError as exc:
                log.warning("could not write a response: %s", exc)
                self.closing_since = time.monotonic()
                return
            if not self._wait(select.POLLOUT):
                log.warning("the client took no response for %g s", IO_SECONDS)
                self.closing_since = time.monotonic()
                return

    def _wait(self, event: int) -> bool:
        """Wait until the socket is ready for `event` (at most IO_SECONDS)."""
        waiting = select.poll()
        waiting.register(self.sock, event)
        return bool(waiting.poll(IO_SECONDS * 1000))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class Endpoint:
    """The HTTP side of the host, on the host loop's thread: it waits for the next request the
    host must answer, serving refusals itself, and ends on the end of stdin."""

    def __init__(self, guard: Guard | None) -> None:
        self.guard = guard
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.connections: dict[int, Connection] = {}
        self.poll = select.poll()
        self.poll.register(self.listener, select.POLLIN)
        self.stdin = sys.stdin.fileno()
        self.poll.register(self.stdin, select.POLLIN)
        self.stdin_open = True

    def next_request(self) -> tuple[Handler, bytes] | None:
        """The next admitted request and its body; None once stdin has ended."""
        while self.stdin_open:
            for connection in list(self.connections.values()):  # requests already buffered
                if connection.closing_since is None and connection.buffer:
                    admitted = self._serve(connection)
                    if admitted is not None:
                        return admitted
            timeout = 1000 if any(c.closing_since for c in self.connections.values()) else None
            for fd, _events in self.poll.poll(timeout):
                if fd == self.listener.fileno():
                    self._accept()
                elif fd == self.stdin:
                    self._read_stdin()
                elif fd in self.connections:
                    connection = self.connections[fd]
                    if not connection.fill():
                        self._drop(fd)
                    elif connection.closing_since is not None:
                        connection.buffer.clear()  # the unread rest of a refused request
                    else:
                        admitted = self._serve(connection)
                        if admitted is not None:
                            return admitted
            self._expire()
        return None

    def _serve(self, connection: Connection) -> tuple[Handler, bytes] | None:
        """Serve the requests the connection holds; the first one the host must answer."""
        while connection.closing_since is None:
            try:
                head = connection.request_head()
            except ValueError:
                connection.write(431, b"", {}, close=True)
                return None
            if head is None:
                return None
            handler = self._handler(connection, head)
            if handler is None:
                return None
            handler.dispatch(self.guard)
            if handler.admitted is not None:
                return handler, handler.admitted
            if handler.close_connection and connection.closing_since is None:
                connection.closing_since = time.monotonic()
        return None

    def _handler(self, connection: Connection, head: bytes) -> Handler | None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            connection.write(400, b"", {}, close=True)
            return None
        headers = Headers()
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                connection.write(400, b"", {}, close=True)
                return None
            key = name.lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        tokens = {t.strip().lower() for t in (headers.get("Connection") or "").split(",")}
        keep = "close" not in tokens and (parts[2] != "HTTP/1.0" or "keep-alive" in tokens)
        return Handler(connection, parts[0], parts[1], headers, keep)

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        connection = Connection(sock)
        self.connections[sock.fileno()] = connection
        self.poll.register(sock, select.POLLIN)

    def _read_stdin(self) -> None:
        try:
            data = os.read(self.stdin, 65536)
        except OSError:
            data = b""
        if not data:  # the bench is gone: end as on conform.shutdown
            self.poll.unregister(self.stdin)
            self.stdin_open = False

    def _drop(self, fd: int) -> None:
        connection = self.connections.pop(fd)
        self.poll.unregister(fd)
        connection.close()

    def _expire(self) -> None:
        """Close connections whose refusal had its time to be read."""
        now = time.monotonic()
        for fd, connection in list(self.connections.items()):
            if connection.closing_since is not None and now - connection.closing_since > (
                LINGER_SECONDS
            ):
                self._drop(fd)

    def close(self) -> None:
        for fd in list(self.connections):
            self._drop(fd)
        self.listener.close()


def main() -> int:
    """Serve HTTP on 127.0.0.1 until `conform.shutdown` or the end of stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="conform-py: %(message)s")
    secret = os.environ.get(SECRET_VARIABLE) or None
    guard = Guard(secret) if secret else None
    endpoint = Endpoint(guard)
    host = HttpHost(endpoint)
    words = " request_authentication" if guard else ""
    sys.stdout.write(f"http://127.0.0.1:{endpoint.port}{PATH}{words}\n")
    sys.stdout.flush()
    sys.stdout = sys.stderr  # nothing else goes to stdout
    status = host.serve()
    host.finish()  # the shutdown request is answered (204) before the endpoint closes
    endpoint.close()
    return status
