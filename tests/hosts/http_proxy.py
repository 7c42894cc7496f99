"""A hostile network between the bench and a working HTTP endpoint: a proxy in front of the
Python reference host served over HTTP, misbehaving in one way on the responses to one case.

`python tests/hosts/http_proxy.py MODE [CASE]`, started by the bench as `http+cmd:`: it starts
the reference host (`runners/python/host.py --http`, which inherits the secret), prints its own
URL with the host's capability words, and forwards every request over one connection. A
response to a request whose body names CASE (exchange ids are `<case>#<n>`; `register` for the
registration answer) is delivered as MODE says:

- `double`: written twice (a second response no request asked for);
- `drip`: its body one byte every 0.2 s;
- `endless`: a chunked body that never ends;
- `huge`: a chunked body past 16 MiB, sent as fast as it goes;
- `cut`: not at all: the connection is closed once the host has answered (a request already
  written must never be sent again);
- `idle-close`: every response (CASE ignored) is followed by the end of the connection (sent
  with it), without `Connection: close`, as servers end idle keep-alive connections;
- `no-url`: prints no URL at all (and sleeps until stdin ends).

Each request forwarded is logged as one line `<id>` to the file in RYUSEN_PROXY_LOG, if set.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runners" / "python" / "host.py"
MIB = 1024 * 1024


def main() -> int:
    mode = sys.argv[1]
    case = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode == "no-url":
        sys.stdin.buffer.read()
        return 0
    host = subprocess.Popen(
        [sys.executable, str(RUNNER), "--http"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    url, *words = host.stdout.readline().decode().split()  # type: ignore[union-attr]
    port = int(url.split(":")[2].split("/")[0])
    upstream = http.client.HTTPConnection("127.0.0.1", port)
    lock = threading.Lock()
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}/ryusen", *words, flush=True)

    def forward(body: bytes, headers: dict[str, str]) -> tuple[int, str, dict[str, str], bytes]:
        with lock:
            upstream.request("POST", "/ryusen", body, headers)
            response = upstream.getresponse()
            return response.status, response.reason, dict(response.getheaders()), response.read()

    def serve(sock: socket.socket) -> None:
        reader = sock.makefile("rb")
        while True:
            request_line = reader.readline()
            if not request_line:
                return
            headers: dict[str, str] = {}
            while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip()] = value.strip()
            body = reader.read(int(headers.get("Content-Length", "0")))
            _log(body)
            status, reason, answer_headers, data = forward(body, headers)
            head = f"HTTP/1.1 {status} {reason}\r\n"
            for name in ("Content-Type",):
                if name in answer_headers:
                    head += f"{name}: {answer_headers[name]}\r\n"
            whole = (head + f"Content-Length: {len(data)}\r\n\r\n").encode() + data
            targeted = bool(case) and _names(body, case)
            if mode == "idle-close":
                # corked, the answer and the end of the connection leave as one segment: the
                # bench sees both before it could write another request on this connection
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
                sock.sendall(whole)
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):  # until the bench lets go of it
                    pass
                sock.close()
                return
            if not targeted:
                sock.sendall(whole)
            elif mode == "double":
                sock.sendall(whole + whole)
            elif mode == "drip":
                sock.sendall((head + f"Content-Length: {len(data)}\r\n\r\n").encode())
                for byte in data:
                    sock.sendall(bytes([byte]))
                    time.sleep(0.2)
            elif mode in ("endless", "huge"):
                sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
                chunk = b"x" * (MIB if mode == "huge" else 16)
                while True:
                    sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    if mode == "endless":
                        time.sleep(0.01)
            elif mode == "cut":
                sock.close()
                return

    def accept() -> None:
        while True:
            sock, _ = listener.accept()
            threading.Thread(target=_quietly, args=(serve, sock), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.buffer.read()  # the bench is gone: end, and the host with us
    host.kill()
    host.wait()
    return 0


def _names(body: bytes, case: str) -> bool:
    try:
        envelope = json.loads(body)
    except ValueError:
        return False
    ident = str(envelope.get("id", "")) if isinstance(envelope, dict) else ""
    kind = str(envelope.get("kind", "")) if isinstance(envelope, dict) else ""
    return ident.startswith(case + "#") or kind == case


def _log(body: bytes) -> None:
    path = os.environ.get("RYUSEN_PROXY_LOG")
    if not path:
        return
    try:
        ident = json.loads(body).get("id", "")
    except (ValueError, AttributeError):
        ident = ""
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"{ident}\n")


def _quietly(serve: object, sock: socket.socket) -> None:
    try:
        serve(sock)  # type: ignore[operator]
    except OSError:  # the bench closed its end: that is what the modes provoke
        pass


if __name__ == "__main__":
    sys.exit(main())
