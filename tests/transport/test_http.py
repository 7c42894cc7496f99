"""The HTTP transport (D-HTTP-*): what counts as an answer, signing, faults, loopback only."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.session.targets import command_target
from fakepeer.transport import httpauth
from fakepeer.transport.errors import (
    FrameError,
    NoAnswer,
    TransportClosed,
    TransportError,
    TransportTimeout,
)
from fakepeer.transport.http import HttpAnswerError, HttpPayload, HttpTransport, parse_url
from fakepeer.transport.process import CommandError

ROOT = Path(__file__).resolve().parents[2]
ENVELOPE = b'{"version":"1.0","kind":"conform.ack","id":"x","body":{}}'

Reply = Callable[[BaseHTTPRequestHandler, bytes], None]


def _ok(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    _answer(handler, 200, ENVELOPE)


def _answer(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    content_type: str = "application/json",
    extra: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (extra or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


class _Server:
    """A loopback endpoint answering each POST with `reply`; records what it received."""

    def __init__(self, reply: Reply) -> None:
        self.requests: list[tuple[dict[str, str], bytes, int]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length <= MAX_FRAME_BYTES else b""
                port = self.client_address[1]
                outer.requests.append((dict(self.headers.items()), body, port))
                reply(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # resets are on purpose
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ryusen"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Reply], _Server]]:
    servers: list[_Server] = []

    def start(reply: Reply) -> _Server:
        servers.append(_Server(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _soon() -> float:
    return time.monotonic() + 5.0


def test_one_envelope_per_post_over_one_keep_alive_connection(serve) -> None:
    server = serve(_ok)
    transport = HttpTransport(server.url)
    transport.send_many([b"one", b"two"])
    assert transport.ready()
    assert transport.receive(_soon()) == ENVELOPE
    assert transport.receive(_soon()) == ENVELOPE
    assert not transport.ready()
    assert [body for _, body, _ in server.requests] == [b"one", b"two"]
    assert len({port for _, _, port in server.requests}) == 1  # keep-alive
    assert server.requests[0][0]["Content-Type"] == "application/json"
    assert "http" in transport.capabilities()
    transport.close()


def test_204_is_no_answer_and_nothing_more_fails_at_once(serve) -> None:
    server = serve(lambda h, b: _answer(h, 204, b""))
    transport = HttpTransport(server.url)
    transport.send(b"report")
    started = time.monotonic()
    with pytest.raises(NoAnswer):
        transport.receive(time.monotonic() + 30)
    assert time.monotonic() - started < 5  # no wait for the deadline: nothing can come


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (lambda h, b: _answer(h, 503, ENVELOPE, extra={"Retry-After": "1"}), "HTTP 503"),
        (lambda h, b: _answer(h, 502, b"<html>bad gateway</html>", "text/html"), "HTTP 502"),
        (lambda h, b: _answer(h, 200, ENVELOPE, "text/plain"), "'text/plain'"),
        (lambda h, b: _answer(h, 200, b"", extra={"Ryusen-Answer": "x"}), "empty body"),
        (lambda h, b: _answer(h, 204, b"x"), "204 No Content with a 1-byte body"),
    ],
)
def test_what_is_not_a_protocol_answer(serve, reply: Reply, words: str) -> None:
    """D-HTTP-STATUS: a generic status is never read as an answer, whatever its body says."""
    transport = HttpTransport(serve(reply).url)
    transport.send(b"request")
    with pytest.raises(HttpAnswerError) as caught:
        transport.receive(_soon())
    assert words in caught.value.detail


def test_a_slow_endpoint_times_out_at_the_deadline(serve) -> None:
    transport = HttpTransport(serve(lambda h, b: (time.sleep(2), _ok(h, b))).url)
    transport.send(b"request")
    with pytest.raises(TransportTimeout) as caught:
        transport.receive(time.monotonic() + 0.3)
    assert "no HTTP response" in caught.value.detail


def test_a_reset_connection_and_a_refused_one_are_transport_failures(serve) -> None:
    def reset(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.rfile.close()
        handler.wfile.close()
        handler.connection.close()  # with linger 0: a reset, not an orderly close
        handler.close_connection = True

    transport = HttpTransport(serve(reset).url)
    transport.send(b"request")
    with pytest.raises(TransportClosed):
        transport.receive(_soon())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    transport = HttpTransport(f"http://127.0.0.1:{port}/ryusen")
    transport.send(b"request")
    with pytest.raises(TransportClosed, match="refused the connection"):
        transport.receive(_soon())


def test_an_oversized_response_is_refused_by_its_announced_length(serve) -> None:
    def huge(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(MAX_FRAME_BYTES + 1))
        handler.end_headers()

    transport = HttpTransport(serve(huge).url)
    transport.send(b"request")
    with pytest.raises(FrameError, match="announced a response"):
        transport.receive(_soon())


def _valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    stamp, nonce = headers[httpauth.TIMESTAMP_HEADER], headers[httpauth.NONCE_HEADER]
    mac = hmac.new(secret.encode(), f"{stamp}.{nonce}.".encode() + body, hashlib.sha256)
    return headers[httpauth.SIGNATURE_HEADER] == "v1=" + mac.hexdigest()


def test_requests_are_signed_and_faults_break_exactly_one_thing(serve) -> None:
    """D-HTTP-AUTH: every request signed; each fault changes only what it names."""
    server = serve(_ok)
    secret = httpauth.new_secret()
    transport = HttpTransport(server.url, secret=secret)
    faults = ["unsigned", "bad_signature", "altered", "stale", "future", "new_connection"]
    transport.send(b"plain")
    for fault in faults:
        transport.send(HttpPayload(b"plain", fault))
    transport.send(HttpPayload(b"plain", "replay"))
    for _ in range(len(faults) + 2):
        transport.receive(_soon())
    (plain, unsigned, bad, altered, stale, future, fresh, replay) = server.requests
    assert _valid(secret, plain[0], plain[1])
    assert httpauth.SIGNATURE_HEADER not in unsigned[0]
    assert not _valid(secret, bad[0], bad[1])
    assert altered[1] != b"plain" and _valid(secret, altered[0], b"plain")
    now = time.time()
    assert now - int(stale[0][httpauth.TIMESTAMP_HEADER]) >= 2 * httpauth.REPLAY_WINDOW_SECONDS - 5
    assert int(future[0][httpauth.TIMESTAMP_HEADER]) - now >= 2 * httpauth.REPLAY_WINDOW_SECONDS - 5
    assert _valid(secret, stale[0], stale[1]) and _valid(secret, future[0], future[1])
    assert _valid(secret, fresh[0], fresh[1]) and fresh[2] != plain[2]  # a new connection
    assert fresh[0][httpauth.NONCE_HEADER] != plain[0][httpauth.NONCE_HEADER]
    # a replay: the very headers the payload was last signed with, over a new connection
    assert replay[0][httpauth.NONCE_HEADER] == fresh[0][httpauth.NONCE_HEADER]
    assert replay[0][httpauth.SIGNATURE_HEADER] == fresh[0][httpauth.SIGNATURE_HEADER]
    assert replay[2] != fresh[2]


def test_second_fixture_faults_break_exactly_one_thing(serve) -> None:
    """The faults the second HTTP fixtures use: each changes only what docs/fixtures.md names."""
    server = serve(_ok)
    secret = httpauth.new_secret()
    transport = HttpTransport(server.url, secret=secret)
    for fault in ("altered_leading", "future_near", "wrong_content_type"):
        transport.send(HttpPayload(b"plain", fault))
    for _ in range(3):
        transport.receive(_soon())
    leading, near, typed = server.requests
    assert leading[1] == b"\nplain" and _valid(secret, leading[0], b"plain")
    ahead = int(near[0][httpauth.TIMESTAMP_HEADER]) - time.time()
    assert httpauth.REPLAY_WINDOW_SECONDS + 20 <= ahead <= httpauth.REPLAY_WINDOW_SECONDS + 31
    assert _valid(secret, near[0], near[1])
    assert typed[0]["Content-Type"] == "text/plain" and _valid(secret, typed[0], typed[1])


def test_oversized_wrapping_fault_announces_four_gib_more_than_it_sends(serve) -> None:
    seen: list[str] = []

    def reply(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        seen.append(handler.headers["Content-Length"])
        handler.close_connection = True
        _answer(handler, 200, ENVELOPE, extra={"Connection": "close"})

    transport = HttpTransport(serve(reply).url)
    transport.send(HttpPayload(b"{}", "oversized_wrapping"))
    assert transport.receive(_soon()) == ENVELOPE
    assert seen == [str(2**32 + 2)] and (2**32 + 2) % 2**32 == len(b"{}")


def test_oversized_fault_announces_one_byte_over_the_limit(serve) -> None:
    seen: list[str] = []

    def reply(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        seen.append(handler.headers["Content-Length"])
        handler.close_connection = True
        _answer(handler, 200, ENVELOPE, extra={"Connection": "close"})

    transport = HttpTransport(serve(reply).url)
    transport.send(HttpPayload(b"{}", "oversized"))
    assert transport.receive(_soon()) == ENVELOPE
    assert seen == [str(MAX_FRAME_BYTES + 1)]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8080/ryusen",
        "http://10.0.0.1:8080/ryusen",
        "http://0.0.0.0:8080/ryusen",
        "https://127.0.0.1:8080/ryusen",
        "http://127.0.0.1/ryusen",
        "http://127.0.0.1:8080/ryusen?x=1",
    ],
)
def test_only_loopback_endpoints_are_accepted(url: str) -> None:
    with pytest.raises(CommandError):
        parse_url(url)


def test_a_plain_url_target_is_not_shut_down_by_the_bench(serve) -> None:
    server = serve(_ok)
    target = command_target(server.url)
    transport = target.factory()
    transport.send(b'{"kind":"conform.shutdown"}')
    transport.close(wait=1.0)
    assert server.requests == []  # the endpoint is not the bench's to end


def _host(tmp_path: Path, text: str) -> str:
    script = tmp_path / "host.py"
    script.write_text(text, encoding="utf-8")
    return f"http+cmd:{sys.executable} {script}"


def _first_request_fails(spec: str, seconds: float = 5.0) -> TransportError:
    """The error of a started host's first request (its URL is read then, by its deadline)."""
    transport = command_target(spec).factory()
    try:
        transport.send(b"{}")
        with pytest.raises(TransportError) as caught:
            transport.receive(time.monotonic() + seconds)
        return caught.value
    finally:
        transport.close()


def test_a_started_host_that_prints_no_url_is_one_clear_line(tmp_path: Path) -> None:
    spec = _host(
        tmp_path, "import sys\nprint('listening on port 80')\nsys.stderr.write('oops\\n')\n"
    )
    assert "not an http:// URL" in _first_request_fails(spec).detail
    spec = _host(tmp_path, "import sys\nsys.stderr.write('cannot bind\\n')\n")
    assert re.search(r"ended its output.*cannot bind", _first_request_fails(spec).detail)


def test_a_started_host_on_another_address_is_refused(tmp_path: Path) -> None:
    spec = _host(tmp_path, "print('http://192.168.1.5:8080/ryusen', flush=True)\n")
    assert "loopback" in _first_request_fails(spec).detail


def test_a_host_that_never_prints_its_url_is_bounded_by_the_request_deadline(
    tmp_path: Path,
) -> None:
    """The URL is read within the first request's deadline (the start bound of a run, cut by
    --max-time), not a fixed 10 s; the start itself does not wait at all."""
    spec = _host(tmp_path, "import time\ntime.sleep(60)\n")
    started = time.monotonic()
    error = _first_request_fails(spec, seconds=0.5)
    assert isinstance(error, TransportTimeout) and "printed no endpoint URL" in error.detail
    assert time.monotonic() - started < 5


def test_the_reference_host_serves_over_http_and_exits_on_shutdown() -> None:
    target = command_target(f"http+cmd:{ROOT / 'runners/python/conform'} --http")
    transport = target.factory()
    transport.send(b'{"version":"1.0","kind":"conform.reset","id":"r","body":{}}')
    assert b'"conform.ack"' in transport.receive(_soon())
    # known from the URL line, read with the first request (the session asks after registering)
    assert transport.capabilities() == {"http", "request_authentication"}
    transport.send(b'{"version":"1.0","kind":"conform.shutdown","id":"s","body":{}}')
    transport.close(wait=2.0)
    assert transport.exit_status() == 0
    with pytest.raises(TransportError):
        transport.send(b"after close")


def test_a_faulted_payload_keeps_its_fault_through_the_fixture_cache() -> None:
    """The fixture cache pickles loaded steps: a fault lost there would send an honest request."""
    import pickle

    payload = pickle.loads(pickle.dumps(HttpPayload(b"{}", "stale"), pickle.HIGHEST_PROTOCOL))
    assert isinstance(payload, HttpPayload) and payload == b"{}"
    assert payload.fault.names == {"stale"}


@pytest.mark.parametrize("fault", ["http_502", "http_503", "http_timeout", "http_reset"])
def test_an_injected_generic_status_withholds_the_answer_and_keeps_the_transport(
    serve, fault: str
) -> None:
    """The model server's faults (D-HTTP-STATUS): the endpoint answered, a generic status came
    back instead; the answer is withheld (the outcome is unknown), the transport goes on."""
    from fakepeer.transport.http import InjectedFailure

    server = serve(_ok)
    transport = HttpTransport(server.url)
    transport.send(HttpPayload(b"invoke", fault))
    with pytest.raises(InjectedFailure) as caught:
        transport.receive(_soon())
    assert caught.value.withheld == ENVELOPE  # the endpoint did answer
    transport.send(b"next")
    assert transport.receive(_soon()) == ENVELOPE
    assert [body for _, body, _ in server.requests] == [b"invoke", b"next"]
    assert server.requests[0][2] != server.requests[1][2]  # a new connection after the fault


def _simulate(sdk: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "fakepeer", "simulate", "--sdk", sdk, "--json"]
    command += ["--function", "conform.saga", "--input", '{"order": "o-1"}']
    command += ["--fault", "http_503:forward:charge"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_simulate_over_http_treats_a_503_as_an_unknown_outcome() -> None:
    """The model server over HTTP: the 503 in place of charge's answer is not a refusal; the
    same operation is offered again as attempt 2 and the run completes."""
    done = _simulate(f"http+cmd:{ROOT / 'runners/python/conform'} --http")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [entry.get("line") for entry in json.loads(done.stdout)["timeline"]]
    assert "@0 main forward charge #1 -> (none) (HTTP 503, outcome unknown)" in lines
    assert "@1000 main forward charge #2 -> step_completed" in lines
    assert lines[-1] is None or "completed" in str(lines[-2:])


def test_an_http_fault_on_the_framed_transport_is_one_clear_line() -> None:
    done = _simulate(str(ROOT / "runners/python/conform"))
    assert done.returncode != 0
    assert "the http_503 fault needs the HTTP transport" in done.stderr
    assert "Traceback" not in done.stderr


def _raw(data: bytes, then: Callable[[], None] | None = None) -> Reply:
    """A reply written as raw bytes on the connection (whatever HTTP they make)."""

    def reply(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.wfile.write(data)
        handler.wfile.flush()
        if then is not None:
            then()

    return reply


def test_chunked_and_until_close_bodies_and_interim_responses_are_read(serve) -> None:
    chunked = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    chunked += b"Transfer-Encoding: chunked\r\n\r\n10\r\n" + ENVELOPE[:16] + b"\r\n"
    chunked += f"{len(ENVELOPE) - 16:x}\r\n".encode() + ENVELOPE[16:] + b"\r\n0\r\n\r\n"
    transport = HttpTransport(serve(_raw(b"HTTP/1.1 100 Continue\r\n\r\n" + chunked)).url)
    transport.send(b"one")
    assert transport.receive(_soon()) == ENVELOPE

    def close(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n")
        handler.wfile.write(ENVELOPE)
        handler.close_connection = True

    transport = HttpTransport(serve(close).url)
    transport.send_many([b"one", b"two"])
    assert transport.receive(_soon()) == ENVELOPE  # the body ends with the connection
    assert transport.receive(_soon()) == ENVELOPE  # and the next request opens another


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (  # one byte every 0.2 s: the deadline holds for the whole body, not per read
            lambda h, b: [
                h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
                *[(h.wfile.write(b"x"), h.wfile.flush(), time.sleep(0.2)) for _ in range(20)],
            ],
            TransportTimeout,
            "of its 100-byte body",
        ),
        (  # a chunked body that never ends
            lambda h, b: [
                h.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                *[
                    (h.wfile.write(b"1\r\nx\r\n"), h.wfile.flush(), time.sleep(0.01))
                    for _ in range(400)
                ],
            ],
            TransportTimeout,
            "did not end its chunked body",
        ),
        (  # past the frame limit, chunk by chunk: refused without buffering it all
            lambda h, b: [
                h.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                *[h.wfile.write(b"100000\r\n" + b"x" * 2**20 + b"\r\n") for _ in range(17)],
            ],
            FrameError,
            "over 16777216 bytes",
        ),
    ],
)
def test_a_body_is_read_within_the_deadline_and_the_limit(
    serve, reply: Reply, error: type, words: str
) -> None:
    transport = HttpTransport(serve(reply).url)
    transport.send(b"request")
    started = time.monotonic()
    with pytest.raises(error) as caught:
        transport.receive(time.monotonic() + 1.0)
    assert words in caught.value.detail
    assert time.monotonic() - started < 3.5  # the deadline, not 20 reads' worth of timeouts


def test_a_second_response_is_the_next_frame_read_and_never_dropped(serve) -> None:
    """Written with the first or later, it is read before anything else is sent; a request
    it came before is not sent."""
    twice = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
    whole = twice % (len(ENVELOPE), ENVELOPE)
    server = serve(_raw(whole + whole))
    transport = HttpTransport(server.url)
    transport.send(b"one")
    assert transport.receive(_soon()) == ENVELOPE
    time.sleep(0.2)
    assert transport.ready()  # the copy is waiting
    transport.send(b"two")
    assert transport.receive(_soon()) == ENVELOPE  # the copy, before `two` is written
    time.sleep(0.2)  # nor written ahead once the copy is read: the session reads it first
    assert [body for _, body, _ in server.requests] == [b"one"]


def test_listen_waits_for_an_unasked_response_and_a_204_copy_is_an_error(serve) -> None:
    late = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
    whole = late % (len(ENVELOPE), ENVELOPE)
    transport = HttpTransport(serve(_raw(whole, then=lambda: time.sleep(0.3))).url)
    transport.send(b"one")
    assert transport.receive(_soon()) == ENVELOPE
    with pytest.raises(TransportTimeout):
        transport.listen(time.monotonic() + 0.1)  # nothing unasked yet

    def twice(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        for _ in range(2):
            handler.wfile.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            handler.wfile.flush()
            time.sleep(0.3)

    transport = HttpTransport(serve(twice).url)
    transport.send(b"report")
    with pytest.raises(NoAnswer):
        transport.receive(_soon())
    with pytest.raises(HttpAnswerError, match="answered one request twice"):
        transport.listen(_soon())


def test_an_idle_connection_closed_by_the_endpoint_is_reopened_not_resent(serve) -> None:
    def reply(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        _ok(handler, body)
        handler.close_connection = True  # closed after a complete answer, no Connection: close

    server = serve(reply)
    transport = HttpTransport(server.url)
    transport.send(b"one")
    assert transport.receive(_soon()) == ENVELOPE
    time.sleep(0.2)  # the end of the connection has arrived
    transport.send(b"two")
    assert transport.receive(_soon()) == ENVELOPE
    assert [body for _, body, _ in server.requests] == [b"one", b"two"]
    assert server.requests[0][2] != server.requests[1][2]
