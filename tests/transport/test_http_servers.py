"""The reference hosts' HTTP servers at the socket: keep-alive, order, closing, refusals read.

Both serve HTTP/1.1 on their own sockets (one thread, one write per response): these pin what
a client may rely on, byte for byte, whichever client it is.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTS = {
    "python": [sys.executable, str(ROOT / "runners/python/host.py"), "--http"],
    "node": ["node", str(ROOT / "runners/node/host.js"), "--http"],
}
RESET = b'{"version":"1.0","kind":"conform.reset","id":"r%d","body":{}}'


@pytest.fixture(params=sorted(HOSTS))
def endpoint(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    """A reference host serving HTTP without authentication: (path, port)."""
    env = {k: v for k, v in os.environ.items() if k != "RYUSEN_CONFORM_HTTP_SECRET"}
    process = subprocess.Popen(
        HOSTS[request.param], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        url = process.stdout.readline().decode().split()[0]  # type: ignore[union-attr]
        port, path = url.removeprefix("http://127.0.0.1:").split("/", 1)
        yield "/" + path, int(port)
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _post(path: str, body: bytes, extra: str = "", length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{extra}"
    return f"{head}Content-Length: {size}\r\n\r\n".encode() + body


def _responses(sock: socket.socket, count: int) -> list[tuple[bytes, dict[str, str], bytes]]:
    """`count` responses read off the socket: (status line, headers, body)."""
    sock.settimeout(10)
    data, found = b"", []
    while len(found) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            lines = data[:end].decode("latin-1").split("\r\n")
            headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
            size = int(headers.get("content-length", "0"))
            if len(data) >= end + 4 + size:
                found.append((lines[0].encode(), headers, data[end + 4 : end + 4 + size]))
                data = data[end + 4 + size :]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return found


def test_keep_alive_and_pipelined_requests_answered_in_order(endpoint) -> None:
    path, port = endpoint
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_post(path, RESET % 1))
        ((status, _, body),) = _responses(sock, 1)
        assert status == b"HTTP/1.1 200 OK" and b'"r1"' in body
        # three at once, one refused before the host sees it: answers keep the order
        sock.sendall(_post(path, RESET % 2) + _post("/elsewhere", b"{}") + _post(path, RESET % 3))
        answers = _responses(sock, 3)
    assert [a[0].split()[1] for a in answers] == [b"200", b"404", b"200"]
    assert b'"r2"' in answers[0][2] and b'"r3"' in answers[2][2]


def test_connection_close_is_honoured(endpoint) -> None:
    path, port = endpoint
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_post(path, RESET % 1, "Connection: close\r\n"))
        ((status, headers, _),) = _responses(sock, 1)
        assert status.endswith(b"200 OK") and headers["connection"] == "close"
        assert sock.recv(1) == b""  # the server ended the connection


def test_an_oversized_refusal_is_read_although_the_body_is_not(endpoint) -> None:
    """Refused from the announced length; the bytes already sent must not reset the answer."""
    path, port = endpoint
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_post(path, b"x" * 200_000, length=17 * 1024 * 1024))
        ((status, headers, body),) = _responses(sock, 1)
    assert status.endswith(b"200 OK") and headers["connection"] == "close"
    assert b"protocol.limit_exceeded" in body


def test_expect_continue_is_answered_before_the_body(endpoint) -> None:
    path, port = endpoint
    with socket.create_connection(("127.0.0.1", port)) as sock:
        body = RESET % 7
        head = _post(path, body, "Expect: 100-continue\r\n")[: -len(body)]
        sock.sendall(head)
        sock.settimeout(10)
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        ((status, _, answer),) = _responses(sock, 1)
    assert status.endswith(b"200 OK") and b'"r7"' in answer


def test_garbage_is_a_bare_400_and_the_host_keeps_serving(endpoint) -> None:
    path, port = endpoint
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        ((status, _, _),) = _responses(sock, 1)
        assert status.split()[1] == b"400"
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_post(path, RESET % 1))
        ((status, _, _),) = _responses(sock, 1)
        assert status.endswith(b"200 OK")
