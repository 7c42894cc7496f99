"""The fault vocabulary of HTTP fixtures (docs/fixtures.md "HTTP faults"): each fault changes
only what it names, two at once commit both, a chosen nonce is shared by the steps naming it,
and a mistake in a fixture's `http` member is one clear line."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fakepeer.cases.errors import FixtureError
from fakepeer.cases.loader import fixture_from_document, steps_from_source
from fakepeer.cases.model import SendStep
from fakepeer.cases.variants import FLEET_VARIANTS, FRESH_PROCESS, VARIANTS, derive
from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.transport import httpauth
from fakepeer.transport.http import HttpTransport
from fakepeer.transport.payload import HttpFault, HttpPayload, parse_fault

ENVELOPE = b'{"version":"1.0","kind":"conform.ack","id":"x","body":{}}'


class _Recorder:
    """A loopback endpoint that answers every POST with one envelope and keeps what came."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes, int]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = self.headers.get("Content-Length")
                body = b""
                if length is None:  # chunked: read it whole
                    while size := int(self.rfile.readline().strip(), 16):
                        body += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                elif int(length) <= MAX_FRAME_BYTES:
                    body = self.rfile.read(int(length))
                else:
                    self.close_connection = True
                outer.requests.append((dict(self.headers.items()), body, self.client_address[1]))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(ENVELOPE)))
                self.end_headers()
                self.wfile.write(ENVELOPE)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ryusen"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    server = _Recorder()
    yield server
    server.server.shutdown()
    server.server.server_close()


def _mac(secret: str, stamp: str, nonce: str, body: bytes) -> str:
    signed = f"{stamp}.{nonce}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def _send(recorder: _Recorder, secret: str, *faults: HttpFault | str | None) -> list:
    transport = HttpTransport(recorder.url, secret=secret)
    for fault in faults:
        transport.send(b"plain" if fault is None else HttpPayload(b"plain", fault))
        transport.receive(time.monotonic() + 5)
    transport.close()
    return recorder.requests


def test_malformed_authentication_headers_are_signed_over_what_they_say(recorder) -> None:
    """Each malformed header is well signed over its own text: only its form is wrong."""
    secret = httpauth.new_secret()
    scheme, stamp, nonce = _send(
        recorder, secret, "signature_unknown_scheme", "timestamp_malformed", "nonce_malformed"
    )
    head = scheme[0]
    mac = _mac(secret, head["Ryusen-Timestamp"], head["Ryusen-Nonce"], b"plain")
    assert head["Ryusen-Signature"] == f"v2={mac}"
    head = stamp[0]
    assert head["Ryusen-Timestamp"].endswith(".0") and head["Ryusen-Timestamp"][:-2].isdigit()
    mac = _mac(secret, head["Ryusen-Timestamp"], head["Ryusen-Nonce"], b"plain")
    assert head["Ryusen-Signature"] == f"v1={mac}"
    head = nonce[0]
    assert len(head["Ryusen-Nonce"]) == 32 and head["Ryusen-Nonce"] == head["Ryusen-Nonce"].upper()
    assert not head["Ryusen-Nonce"].isdigit()  # at least one letter, so the case shows
    mac = _mac(secret, head["Ryusen-Timestamp"], head["Ryusen-Nonce"], b"plain")
    assert head["Ryusen-Signature"] == f"v1={mac}"


def test_a_chosen_nonce_is_shared_and_two_faults_commit_both(recorder) -> None:
    secret = httpauth.new_secret()
    book: dict[str, str] = {}
    stale = parse_fault({"faults": ["stale", "wrong_content_type"], "nonce": "n"}, book)
    again = parse_fault({"nonce": "n"}, book)
    other = parse_fault({"nonce": "m"}, book)
    first, second, third = _send(recorder, secret, stale, again, other)
    assert first[0]["Ryusen-Nonce"] == second[0]["Ryusen-Nonce"] == book["n"]
    assert third[0]["Ryusen-Nonce"] == book["m"] != book["n"]
    assert first[0]["Content-Type"] == "text/plain" and second[0]["Content-Type"] == (
        "application/json"
    )
    assert time.time() - int(first[0]["Ryusen-Timestamp"]) >= 590
    for head, body, _ in (first, second):
        mac = _mac(secret, head["Ryusen-Timestamp"], head["Ryusen-Nonce"], body)
        assert head["Ryusen-Signature"] == f"v1={mac}"


def test_unsigned_and_oversized_at_once(recorder) -> None:
    both = parse_fault({"faults": ["unsigned", "oversized"]})
    (request,) = _send(recorder, httpauth.new_secret(), both)
    assert request[0]["Content-Length"] == str(MAX_FRAME_BYTES + 1)
    assert "Ryusen-Signature" not in request[0]


def test_oversized_alone_is_signed_over_what_it_sends(recorder) -> None:
    secret = httpauth.new_secret()
    (request,) = _send(recorder, secret, "oversized")
    head = request[0]
    assert head["Content-Length"] == str(MAX_FRAME_BYTES + 1)
    assert head["Ryusen-Signature"] == "v1=" + _mac(
        secret, head["Ryusen-Timestamp"], head["Ryusen-Nonce"], b"plain"
    )


def test_no_length_sends_the_body_chunked(recorder) -> None:
    (request,) = _send(recorder, httpauth.new_secret(), "no_length")
    assert "Content-Length" not in request[0]
    assert request[0]["Transfer-Encoding"] == "chunked" and request[1] == b"plain"


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("unsgined", "unknown HTTP fault 'unsgined'"),
        ({"faults": ["stale", "future"]}, "stale and future are both timestamp faults"),
        ({"faults": ["unsigned", "stale"]}, "unsigned and stale cannot both apply"),
        ({"faults": ["replay", "altered"]}, "replay and altered cannot both apply"),
        ({"faults": ["oversized", "no_length"]}, "both framing faults"),
        ({"faults": ["stale", "stale"]}, "names a fault twice"),
        ({"faults": []}, "at least one fault or a nonce"),
        ({"nonce": "N1"}, "expected a label"),
        ({"nonce": "n", "faults": ["unsigned"]}, "unsigned leaves no nonce to choose"),
        ({"nonce": "n", "faults": ["nonce_malformed"]}, "nonce_malformed leaves no nonce"),
        ({"fault": "stale"}, "unknown member 'fault'"),
        (3, "expected a fault name or an object"),
    ],
)
def test_a_wrong_fault_is_one_clear_line(raw: object, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        parse_fault(raw)


def _document(http: object) -> dict:
    return {
        "id": "http.x",
        "title": "t",
        "rule": {"section": "s", "quote": "q"},
        "category": "http",
        "level": "required",
        "capabilities": ["http"],
        "steps": [
            {"send": {"kind": "conform.trace", "body": {}, "id": "-"}, "http": http},
            {"expect": {"kind": "conform.trace", "body": {"events": []}}},
            {"send": {"kind": "conform.trace", "body": {}}, "http": {"nonce": "a"}},
            {"expect": {"kind": "conform.trace", "body": {"events": []}}},
        ],
    }


def test_the_loader_names_the_step_of_a_wrong_fault() -> None:
    with pytest.raises(FixtureError) as caught:
        fixture_from_document(_document({"faults": ["stale", "future"]}))
    (problem,) = caught.value.problems
    assert problem.pointer == "/steps/0/http" and "both timestamp faults" in problem.message


def test_one_build_shares_a_label_and_the_next_build_draws_anew() -> None:
    """A fixture loaded from a file builds its steps per case: each case draws its nonces."""
    document = _document({"faults": ["stale"], "nonce": "a"})
    fixture = fixture_from_document(document).compact(
        json.dumps(document).encode(), steps_from_source
    )
    first = [s.payload.fault.nonce for s in fixture.steps if isinstance(s, SendStep)]
    second = [s.payload.fault.nonce for s in fixture.steps if isinstance(s, SendStep)]
    assert first[0] == first[1] and second[0] == second[1] and first[0] != second[0]


#: The rewrites of one fixture's sends (`fresh-process` sends the same bytes on a new host; the
#: fleet variants serve lifecycle scenarios only, on several SDKs).
_REWRITING = [name for name in VARIANTS if name not in (FRESH_PROCESS, *FLEET_VARIANTS)]


@pytest.mark.parametrize("variant", _REWRITING)
def test_a_variant_keeps_the_fault_of_every_send(variant: str) -> None:
    """A variant of a faulted send sends the same wrong request, only spelled otherwise."""
    fixture = fixture_from_document(_document({"faults": ["stale"], "nonce": "a"}))
    derived = derive(fixture, variant)
    assert derived is not None
    sends = [step for step in derived.steps if isinstance(step, SendStep)]
    assert [type(step.payload) for step in sends] == [HttpPayload, HttpPayload]
    assert sends[0].payload.fault.names == {"stale"}
    assert sends[0].payload.fault.nonce == sends[1].payload.fault.nonce
    json.loads(sends[0].payload)  # still one JSON document
