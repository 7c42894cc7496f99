"""HTTP/1.1 messages on one loopback connection, every read and write bounded by one deadline.

Why not `http.client`: its socket timeout applies per read, so a body dripped a byte at a time
or one that never ends outlives any case deadline; it parses headers through the `email`
package (a large share of a request's cost); and a second response on one request stays
unread in its buffer. Here a request is one write (head and body together, `TCP_NODELAY`), a
response is read against the caller's absolute deadline however it is sent (all at once,
dripped, chunked, until close), within the frame limit, and what the endpoint writes unasked
can be told apart from an idle connection it closed (`Link.unasked`).
"""

from __future__ import annotations

import select
import socket
import time
from dataclasses import dataclass

from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.transport.errors import (
    FrameError,
    TransportClosed,
    TransportError,
    TransportTimeout,
)

#: Longest response head (status line and headers) the bench reads.
MAX_HEAD_BYTES = 64 * 1024
#: Bytes asked of the socket per read.
READ_SIZE = 256 * 1024
#: Interim (1xx) responses skipped before the final one, at most.
MAX_INTERIM = 8
_NO_BODY = (204, 304)


@dataclass
class Response:
    """One complete HTTP response: status, reason, headers by lowercase name, body."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    #: The endpoint closes the connection after it (`Connection: close`, HTTP/1.0, a body
    #: that ends with the connection).
    closes: bool

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


class Link:
    """One TCP connection to the endpoint: requests written whole, responses read by deadline."""

    def __init__(self, host: str, port: int, deadline: float | None) -> None:
        try:
            self.sock = socket.create_connection((host, port), timeout=_seconds(deadline))
        except TimeoutError:
            raise TransportTimeout("accepted no connection before the deadline") from None
        except ConnectionRefusedError:
            raise TransportClosed(f"refused the connection to {host}:{port}") from None
        except OSError as exc:
            raise TransportClosed(f"connection failed: {exc}") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self._poll = select.poll()
        self._poll.register(self.sock, select.POLLIN)
        self._buffer = bytearray()
        # one read buffer per connection: a fresh 256 KiB object per read would be mapped and
        # unmapped by the allocator each time
        self._chunk = bytearray(READ_SIZE)
        self._chunk_view = memoryview(self._chunk)
        self.closed = False
        #: Final responses read on this connection: from the second on, the endpoint has shown
        #: it keeps a connection open after a response (`HttpTransport` writes ahead then).
        self.responses = 0

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.sock.close()

    # ----------------------------------------------------------------- writing

    def write(self, data: bytes, deadline: float | None) -> None:
        """Write one whole request; TransportTimeout when the endpoint stops reading."""
        view = memoryview(data)
        writable: select.poll | None = None
        while view:
            try:
                view = view[self.sock.send(view) :]
                continue
            except BlockingIOError:
                pass
            except OSError as exc:  # a reset or a closed connection: the request is lost
                raise TransportClosed(f"closed the connection during a request ({exc})") from None
            if writable is None:
                writable = select.poll()
                writable.register(self.sock, select.POLLOUT)
            if not writable.poll(_milliseconds(deadline)) and _past(deadline):
                raise TransportTimeout("stopped reading the request before the deadline")

    # ----------------------------------------------------------------- reading

    def unasked(self) -> str:
        """What the connection holds before a request is written, without waiting:
        `none`, `closed` (the endpoint ended it, or reset it, while idle) or `data` (bytes
        it wrote that no request asked for: a second response)."""
        if self._buffer:
            return "data"
        if not self._poll.poll(0):
            return "none"
        try:
            peeked = self.sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            return "none"
        except OSError:
            return "closed"
        return "data" if peeked else "closed"

    def wait_unasked(self, deadline: float | None) -> bool:
        """Wait until the endpoint writes something unasked or ends the connection (True),
        or until `deadline` (False)."""
        if self._buffer:
            return True
        return bool(self._poll.poll(_milliseconds(deadline)))

    def response(self, deadline: float | None) -> Response:
        """Read one final response (interim 1xx ones skipped) by `deadline`."""
        for _ in range(MAX_INTERIM + 1):
            response = self._one(deadline)
            if not 100 <= response.status < 200 or response.status == 101:
                self.responses += 1
                return response
        raise FrameError(f"sent more than {MAX_INTERIM} interim (1xx) responses to one request")

    def _one(self, deadline: float | None) -> Response:
        head = self._head(deadline)
        status, reason, version, headers = _parse_head(head)
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        closes = "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)
        if 100 <= status < 200 or status in _NO_BODY:
            return Response(status, reason, headers, b"", closes)
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.split(",")[-1].strip().lower() == "chunked":
                return Response(status, reason, headers, self._chunked(deadline), closes)
            return Response(status, reason, headers, self._until_close(deadline), True)
        length = headers.get("content-length")
        if length is None:
            return Response(status, reason, headers, self._until_close(deadline), True)
        size = _content_length(length)
        if size > MAX_FRAME_BYTES:
            raise FrameError(f"announced a response of {size} bytes (limit {MAX_FRAME_BYTES})")
        return Response(status, reason, headers, self._exactly(size, deadline), closes)

    def _head(self, deadline: float | None) -> bytes:
        start = 0
        while True:
            end = self._buffer.find(b"\r\n\r\n", start)
            if end >= 0:
                head = bytes(self._buffer[:end])
                del self._buffer[: end + 4]
                return head
            bare = self._buffer.find(b"\n\n", start)  # a head ended by bare line feeds
            if bare >= 0:
                head = bytes(self._buffer[:bare])
                del self._buffer[: bare + 2]
                return head
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise FrameError(f"sent a response head over {MAX_HEAD_BYTES} bytes")
            start = max(0, len(self._buffer) - 3)
            if not self._fill(deadline, "sent no HTTP response before the deadline"):
                if self._buffer:
                    raise TransportClosed("closed the connection inside a response head")
                raise TransportClosed("closed the connection before its answer")

    def _exactly(self, size: int, deadline: float | None) -> bytes:
        while len(self._buffer) < size:
            got = len(self._buffer)
            if not self._fill(deadline, f"sent {got} of its {size}-byte body by the deadline"):
                raise TransportClosed(f"closed the connection after {got} of {size} body bytes")
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        return body

    def _until_close(self, deadline: float | None) -> bytes:
        while self._fill(deadline, "did not end its response body by the deadline"):
            if len(self._buffer) > MAX_FRAME_BYTES:
                raise FrameError(f"sent a response over {MAX_FRAME_BYTES} bytes")
        body = bytes(self._buffer)
        self._buffer.clear()
        return body

    def _chunked(self, deadline: float | None) -> bytes:
        body = bytearray()
        while True:
            line = self._line(deadline)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise FrameError(f"broke HTTP: a chunk size {line[:40]!r}") from None
            if size < 0:
                raise FrameError(f"broke HTTP: a chunk size {line[:40]!r}")
            if size == 0:
                while self._line(deadline):  # trailers, up to the empty line
                    pass
                return bytes(body)
            if len(body) + size > MAX_FRAME_BYTES:
                raise FrameError(f"sent a response over {MAX_FRAME_BYTES} bytes")
            body += self._exactly(size, deadline)
            if self._line(deadline):
                raise FrameError("broke HTTP: a chunk longer than its size")

    def _line(self, deadline: float | None) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end]).rstrip(b"\r")
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise FrameError(f"sent a chunk line over {MAX_HEAD_BYTES} bytes")
            if not self._fill(deadline, "did not end its chunked body by the deadline"):
                raise TransportClosed("closed the connection inside a chunked body")

    def _fill(self, deadline: float | None, late: str) -> bool:
        """Read what comes into the buffer; False at end of stream; TransportTimeout(`late`)."""
        while True:
            if not self._poll.poll(_milliseconds(deadline)) and _past(deadline):
                raise TransportTimeout(late)
            try:
                count = self.sock.recv_into(self._chunk)
            except BlockingIOError:
                continue
            except OSError as exc:  # a reset
                raise TransportClosed(f"reset the connection ({exc.strerror or exc})") from None
            if not count:
                return False
            self._buffer += self._chunk_view[:count]
            return True


def _parse_head(head: bytes) -> tuple[int, str, str, dict[str, str]]:
    """(status, reason, version, headers by lowercase name) of a response head."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise FrameError("broke HTTP: an undecodable response head") from None
    lines = text.split("\n")
    status_line = lines[0].rstrip("\r")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise FrameError(f"broke HTTP: a status line {status_line[:80]!r}")
    if len(parts[1]) != 3:
        raise FrameError(f"broke HTTP: a status line {status_line[:80]!r}")
    headers: dict[str, str] = {}
    name = ""
    for raw in lines[1:]:
        line = raw.rstrip("\r")
        if line[:1] in (" ", "\t") and name:  # an obsolete folded continuation
            headers[name] += " " + line.strip()
            continue
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name or " " in name:
            raise FrameError(f"broke HTTP: a header line {line[:80]!r}")
        value = value.strip()
        if name in headers:
            if name == "content-length" and headers[name] != value:
                raise FrameError("broke HTTP: two different Content-Length headers")
            if name != "content-length":
                headers[name] += ", " + value
            continue
        headers[name] = value
    return int(parts[1]), parts[2].strip() if len(parts) > 2 else "", parts[0], headers


def _content_length(text: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise FrameError(f"broke HTTP: a Content-Length of {text[:40]!r}")
    return int(text)


def _seconds(deadline: float | None) -> float | None:
    """A socket timeout for the time left (never 0, which would make the socket non-blocking)."""
    if deadline is None:
        return None
    return max(0.001, deadline - time.monotonic())


def _milliseconds(deadline: float | None) -> int | None:
    """A poll timeout for the time left; None waits for ever."""
    if deadline is None:
        return None
    return max(0, int((deadline - time.monotonic()) * 1000) + 1)


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


__all__ = ["Link", "Response", "TransportError"]
