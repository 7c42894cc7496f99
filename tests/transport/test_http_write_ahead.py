"""Issue 34: a plain request is written as soon as the connection is free, one at a time.

The endpoint works on the next request while the bench checks the answer before it (the reset
while the case's script is built, the trace while the invoke's answer is compared), and it is
never sent a request before it has answered the one before (no pipelining after a POST, RFC
9112 9.3.2); a request with a fault is written only when its answer is asked for.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from fakepeer.transport.http import HttpTransport
from fakepeer.transport.payload import HttpFault, HttpPayload

ANSWER = b'{"version":"1.0","kind":"conform.ack","id":"%s","body":{}}'


class Endpoint:
    """One keep-alive connection, answered slowly: it notes when each request arrived and
    when its response was written."""

    def __init__(self, delay: float = 0.05) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.delay = delay
        self.events: list[tuple[str, float]] = []
        self.arrived = threading.Condition()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        sock, _ = self.listener.accept()
        data = b""
        with sock:
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, data = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(data) < length:
                    data += sock.recv(65536)
                body, data = data[:length], data[length:]
                ident = body.split(b'"id":"')[1].split(b'"')[0].decode()
                with self.arrived:
                    self.events.append((f"request {ident}", time.monotonic()))
                    self.arrived.notify_all()
                time.sleep(self.delay)
                if data or self._waiting(sock):  # the next request came before this answer
                    self.events.append((f"pipelined after {ident}", time.monotonic()))
                answer = ANSWER % ident.encode()
                self.events.append((f"response {ident}", time.monotonic()))
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )

    @staticmethod
    def _waiting(sock: socket.socket) -> bool:
        sock.setblocking(False)
        try:
            return bool(sock.recv(1, socket.MSG_PEEK))
        except BlockingIOError:
            return False
        finally:
            sock.setblocking(True)

    def wait_for(self, what: str, seconds: float) -> bool:
        with self.arrived:
            return self.arrived.wait_for(
                lambda: any(name == what for name, _ in self.events), seconds
            )

    def order(self) -> list[str]:
        return [name for name, _ in self.events]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.listener.close()


def _frame(ident: str) -> bytes:
    return b'{"version":"1.0","kind":"conform.reset","id":"%s","body":{}}' % ident.encode()


def test_each_request_is_written_after_the_answer_before_it(endpoint: Endpoint) -> None:
    transport = HttpTransport(f"http://127.0.0.1:{endpoint.port}/ryusen")
    deadline = time.monotonic() + 10
    try:
        transport.send_many([_frame("a"), _frame("b"), _frame("c")], deadline)
        answers = [transport.receive(deadline) for _ in range(3)]
    finally:
        transport.close()
    assert [a.split(b'"id":"')[1][:1] for a in answers] == [b"a", b"b", b"c"]
    assert endpoint.order() == [
        "request a", "response a", "request b", "response b", "request c", "response c"
    ]  # fmt: skip


def test_the_next_request_is_written_before_the_bench_asks_for_its_answer(
    endpoint: Endpoint,
) -> None:
    transport = HttpTransport(f"http://127.0.0.1:{endpoint.port}/ryusen")
    deadline = time.monotonic() + 10
    try:
        transport.send(_frame("first"), deadline)
        assert endpoint.wait_for("request first", 5), "the request waited for a receive"
        transport.send_many([_frame("second"), _frame("third")], deadline)
        assert transport.receive(deadline).count(b'"first"') == 1
        assert transport.receive(deadline).count(b'"second"') == 1
        # the bench now checks the second answer; the endpoint, which kept the connection
        # open after a response, already has the third request
        assert endpoint.wait_for("request third", 5), "the next request was not written ahead"
        assert transport.receive(deadline).count(b'"third"') == 1
    finally:
        transport.close()


def test_a_request_with_a_fault_waits_until_its_answer_is_asked_for(endpoint: Endpoint) -> None:
    transport = HttpTransport(f"http://127.0.0.1:{endpoint.port}/ryusen")
    deadline = time.monotonic() + 10
    faulted = HttpPayload(_frame("faulted"), HttpFault(frozenset({"new_connection"})))
    try:
        transport.send(_frame("plain"), deadline)
        transport.send(faulted, deadline)
        assert transport.receive(deadline).count(b'"plain"') == 1
        assert not endpoint.wait_for("request faulted", 0.3)
    finally:
        transport.close()


def test_without_a_deadline_nothing_is_written_ahead(endpoint: Endpoint) -> None:
    """Writing ahead never waits where the request itself would not have."""
    transport = HttpTransport(f"http://127.0.0.1:{endpoint.port}/ryusen")
    try:
        transport.send(_frame("later"))
        assert not endpoint.wait_for("request later", 0.3)
        assert transport.receive(time.monotonic() + 10).count(b'"later"') == 1
    finally:
        transport.close()


def test_an_endpoint_that_closes_after_each_answer_unannounced_loses_no_request() -> None:
    """Closing a keep-alive connection after a complete response, with no `Connection: close`,
    is allowed (docs/protocol.md 1.1): a request written the moment the response was read would
    go to a connection the endpoint is about to close, and be lost as the case's error."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    served: list[str] = []

    def serve() -> None:
        while len(served) < 3:
            sock, _ = listener.accept()
            with sock:
                data = b""
                while b'"body":{}}' not in data:
                    data += sock.recv(65536)
                ident = data.split(b'"id":"')[1].split(b'"')[0]
                served.append(ident.decode())
                answer = ANSWER % ident
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                time.sleep(0.02)  # some work of its own, then it closes, unannounced

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    transport = HttpTransport(f"http://127.0.0.1:{port}/ryusen")
    deadline = time.monotonic() + 10
    try:
        transport.send_many([_frame("a"), _frame("b"), _frame("c")], deadline)
        answers = []
        for _ in range(3):
            answers.append(transport.receive(deadline))
            time.sleep(0.1)  # the bench checks the answer: the endpoint has closed meanwhile
    finally:
        transport.close()
        listener.close()
    assert [a.split(b'"id":"')[1][:1] for a in answers] == [b"a", b"b", b"c"]
    assert served == ["a", "b", "c"]
