"""The conformance host over HTTP (docs/protocol.md "HTTP"), with the standard library only.

One envelope per POST body; the frame the host writes in answer is the response body (200),
none is a 204. The §12 host loop is unchanged: it runs on its own thread and takes each
request's payload where it would read a frame; what it writes until it asks for the next frame
is that request's answer. Every refusal (too large, unauthenticated, not JSON) is a
`protocol_error` envelope with status 200, never a bare status (D-HTTP-STATUS).

Started as `conform --http`: binds 127.0.0.1 on a free port, prints its URL (and
`request_authentication` when RYUSEN_CONFORM_HTTP_SECRET gives it a secret) as its first stdout
line, logs to stderr, and exits on `conform.shutdown` or when its stdin ends.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import queue
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ryusen_sdk import ProtocolError
from ryusen_sdk.answers import protocol_error
from ryusen_sdk.codec import encode_envelope

from .host import Host

log = logging.getLogger("ryusen.conform.http")

PATH = "/ryusen"
MAX_BODY_BYTES = 16 * 1024 * 1024
REPLAY_WINDOW_SECONDS = 300
SECRET_VARIABLE = "RYUSEN_CONFORM_HTTP_SECRET"
NO_ID = "-"


class HttpHost(Host):
    """The §12 host with requests for frames: `next_frame` ends one request's answer."""

    def __init__(self) -> None:
        super().__init__(None, None)  # type: ignore[arg-type]
        self.requests: queue.Queue[bytes | None] = queue.Queue()
        self.replies: queue.Queue[list[bytes]] = queue.Queue()
        self._written: list[bytes] = []
        self._serving = False

    def send(self, kind: str, frame_id: str, body: dict[str, Any]) -> None:
        log.debug("-> %s %s", kind, frame_id)
        self._written.append(encode_envelope(kind, frame_id, body))

    def next_frame(self) -> bytes:
        if self._pushed_back is not None:
            payload, self._pushed_back = self._pushed_back, None
            return payload
        self.finish()
        payload = self.requests.get()
        if payload is None:
            from .host import Shutdown

            raise Shutdown()
        self._serving = True
        return payload

    def finish(self) -> bool:
        """The request being served is answered completely: hand over what was written."""
        if not self._serving:
            return False
        self._serving = False
        written, self._written = self._written, []
        self.replies.put(written)
        return True


class Guard:
    """Request authentication (D-HTTP-AUTH): HMAC-SHA256 over timestamp "." nonce "." body,
    a window of 300 s either way, and each nonce accepted once within it."""

    def __init__(self, secret: str) -> None:
        self.secret = secret.encode("ascii")
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def refusal(self, headers: Any, body: bytes) -> str | None:
        """Why the request is refused, or None when it is authentic, fresh and new."""
        timestamp = headers.get("Ryusen-Timestamp")
        nonce = headers.get("Ryusen-Nonce")
        signature = headers.get("Ryusen-Signature")
        if not timestamp or not nonce or not signature:
            return "unsigned request"
        if not timestamp.isdigit() or len(timestamp) > 12 or not nonce.isascii():
            return "malformed authentication headers"
        signed = f"{timestamp}.{nonce}.".encode("ascii") + body
        mac = "v1=" + hmac.new(self.secret, signed, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature.encode("utf-8", "replace"), mac.encode("ascii")):
            return "bad signature"
        now = time.time()
        if abs(now - int(timestamp)) > REPLAY_WINDOW_SECONDS:
            return "stale timestamp"
        with self._lock:
            for seen, when in list(self._seen.items()):
                if now - when > 2 * REPLAY_WINDOW_SECONDS:
                    del self._seen[seen]
            if nonce in self._seen:
                return "replayed request"
            self._seen[nonce] = now
        return None


def refusal_envelope(category: str, message: str) -> bytes:
    error = ProtocolError(category, "", message)
    answer = protocol_error(error.to_record())
    return encode_envelope(answer.kind, NO_ID, answer.body)


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


def make_handler(host: HttpHost, guard: Guard | None, lock: threading.Lock) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body are two writes: without this, Nagle waits for a delayed ACK
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            log.debug(format, *args)

        def do_POST(self) -> None:  # noqa: N802
            if self.path != PATH:
                self.send_error(404)
                return
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit():
                self.close_connection = True
                self.respond([refusal_envelope("protocol.malformed", "no Content-Length")])
                return
            if int(length) > MAX_BODY_BYTES:
                # refused from the announced length alone: the body is never read (D-HTTP-LIMITS)
                self.close_connection = True
                self.respond([refusal_envelope("protocol.limit_exceeded", "request too large")])
                return
            body = self.rfile.read(int(length))
            if guard is not None:
                why = guard.refusal(self.headers, body)
                if why is not None:
                    log.warning("refused: %s", why)
                    self.respond([refusal_envelope("protocol.unauthenticated", why)])
                    return
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if content_type.lower() != "application/json":
                self.respond([refusal_envelope("protocol.malformed", "not application/json")])
                return
            with lock:  # a host serves one frame at a time (§12.1)
                host.requests.put(body)
                written = host.replies.get()
            self.respond(written)
            host.answered.set()  # type: ignore[attr-defined]

        def respond(self, written: list[bytes]) -> None:
            status, data, headers = response_for(written)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if status != 204:
                self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main() -> int:
    """Serve HTTP on 127.0.0.1 until `conform.shutdown` or the end of stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="conform-py: %(message)s")
    secret = os.environ.get(SECRET_VARIABLE) or None
    # this thread has the deep stack frames need (entry.py); the HTTP threads only move bytes
    threading.stack_size(16 * 1024 * 1024)
    host = HttpHost()
    host.answered = threading.Event()  # type: ignore[attr-defined]
    guard = Guard(secret) if secret else None
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(host, guard, threading.Lock()))
    server.daemon_threads = True
    port = server.server_address[1]
    words = " request_authentication" if guard else ""
    sys.stdout.write(f"http://127.0.0.1:{port}{PATH}{words}\n")
    sys.stdout.flush()
    sys.stdout = sys.stderr  # nothing else goes to stdout

    def watch_stdin() -> None:
        while sys.stdin.buffer.read(65536):
            pass
        host.requests.put(None)  # the bench is gone: end as on conform.shutdown

    threading.Thread(target=watch_stdin, daemon=True).start()
    serving = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    serving.start()
    status = host.serve()
    host.answered.clear()  # type: ignore[attr-defined]
    if host.finish():  # the shutdown request is answered (204) before the server stops
        host.answered.wait(1.0)  # type: ignore[attr-defined]
    server.shutdown()
    return status
