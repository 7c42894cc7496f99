"""The one contract between the session layer and a transport to an SDK host.

A transport moves whole frame payloads (§1) between the bench and one SDK host. The session
(`session/sdk.py`) uses only what this class declares; everything optional has a default here,
so the session never probes a transport for what it can do.

Deadlines are absolute `time.monotonic()` values (None: wait forever). Any failure raises a
TransportError subclass, after which the transport is unusable and must be closed. `close`
must be safe to call more than once and from another thread (Ctrl-C), and must return within
about `wait` seconds plus a short grace whatever the host does.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakepeer.transport.ring import RingBuffer


class Transport:
    """One framed, bidirectional connection to one SDK host."""

    #: True when the host's output ends once the host has exited (a process's stdout, an
    #: in-process host's pipe): the session may then send `conform.shutdown` and stop listening
    #: for a late frame at that end, since an exited host writes nothing more. False (an HTTP
    #: endpoint, which writes only in answer to a request) keeps the plain timed listen.
    output_ends_with_host = False
    #: True when a frame is best sent as soon as it is queued (HTTP: one request at a time, so
    #: a reset written before the case's script is built costs no round trip of its own);
    #: False batches queued frames into one write before the next read (a framed stream).
    writes_ahead = False

    def __init__(self, stderr_capacity: int = 64 * 1024) -> None:
        #: The host's diagnostic output (a process's stderr), its last bytes only. Transports
        #: whose hosts have no such channel leave it empty.
        self.stderr = RingBuffer(stderr_capacity)

    # ----------------------------------------------------------------- required

    def send(self, payload: bytes, deadline: float | None = None) -> None:
        """Deliver one frame payload before `deadline` (TransportTimeout otherwise)."""
        raise NotImplementedError

    def receive(self, deadline: float | None = None) -> bytes:
        """The next frame payload from the host; TransportTimeout when none came by `deadline`."""
        raise NotImplementedError

    def close(self, wait: float = 0.0) -> None:
        """End the host: let it see end of input, give it `wait` seconds, then stop it for good."""
        raise NotImplementedError

    # ----------------------------------------------------------------- optional (defaults)

    def send_many(self, payloads: Sequence[bytes], deadline: float | None = None) -> None:
        """Deliver several frames in order (a transport may batch them into one write)."""
        for payload in payloads:
            self.send(payload, deadline)

    def listen(self, deadline: float | None = None) -> bytes:
        """A frame the host sends unasked before `deadline` (after what is queued is sent).

        As `receive` where frames may come at any time; a request-response transport, which
        otherwise fails at once when nothing was asked, waits for one here.
        """
        return self.receive(deadline)

    def ready(self) -> bool:
        """False only when `receive` would surely wait: nothing is queued and nothing came.

        True means "maybe": `receive` returns or fails at once, or the transport cannot tell
        without waiting (the default), in which case the session receives with a past deadline.
        """
        return True

    def capabilities(self) -> frozenset[str]:
        """Capabilities of the transport itself (e.g. `http`, `request_authentication`).

        They join what the host offered at registration, so fixtures of one transport's
        mapping are skipped elsewhere with the usual reason.
        """
        return frozenset()

    def exit_status(self) -> int | None:
        """The host's own exit status once it ended by itself, else None (or when unknown)."""
        return None

    def exit_note(self, *, hung: bool = False) -> str | None:
        """One clause about how the host ended by itself (for an error's reason), or None.

        `hung`: the case hung, so a host that ended while its output stayed open has left
        something behind that holds it. Transport-specific words stay in the transport.
        """
        return None

    def stderr_tail(self) -> str:
        """The kept tail of the host's diagnostic output (complete once `close` returned)."""
        return self.stderr.text()
