"""The SDK as a subprocess: framed stdin/stdout, stderr kept in a ring, every descendant killed.

Why this shape: a conformance host under test may crash, hang, flood stderr, leave a grandchild
holding the pipe, ignore SIGTERM, or start a process that leaves its group (`setsid`). Reads
and writes use a selector with a deadline (no thread per read); stderr is drained by one thread
per process into a bounded ring; `close` kills the host and everything it started (see
`containment`), SIGTERM then SIGKILL, and always reaps. Process words (exit statuses, signals)
stay in this module: the session asks the transport for an `exit_note`.
"""

from __future__ import annotations

import atexit
import math
import os
import select
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from fakepeer.transport import containment
from fakepeer.transport.base import Transport
from fakepeer.transport.errors import (
    FrameError,
    TransportClosed,
    TransportError,
    TransportTimeout,
)
from fakepeer.transport.framing import FrameDecoder, encode_frame

#: Bytes read from the SDK's stdout per system call, into one buffer allocated per transport:
#: a fresh 256 KiB bytes object per `os.read` would be mmap'ed, remapped and unmapped each time.
READ_CHUNK = 256 * 1024
STDERR_CAPACITY = 64 * 1024
TERM_GRACE_SECONDS = 0.5
EXIT_WAIT_SECONDS = 1.0
STDERR_SETTLE_SECONDS = 0.5
#: Reads of what the stderr pipe still holds once the group is killed (bounds an escaped writer).
FINAL_STDERR_READS = 16

_live: weakref.WeakSet[SubprocessTransport] = weakref.WeakSet()
_live_lock = threading.Lock()
#: Hosts being started (forked, not yet in `containment.hosts`), under `_live_lock`: while any
#: is, no orphan hunt runs, or a session closing its last host in one thread would take another
#: thread's host, a child in its own session not yet known as a host, for an orphan and kill it.
_starting = 0


class CommandError(ValueError):
    """The SDK command line cannot be started (not found, not executable, empty)."""


def parse_command(command: str | Sequence[str], cwd: Path | None = None) -> list[str]:
    """Split an SDK command (shlex); a program path with a `/` is relative to cwd."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:  # an unclosed quote
        raise CommandError(f"cannot split the SDK command {command!r}: {exc}") from None
    if not argv:
        raise CommandError("the SDK command is empty")
    program = argv[0]
    if "/" in program:
        path = Path(program)
        if not path.is_absolute():
            path = (cwd or Path.cwd()) / path
        if path.is_dir():
            raise CommandError(
                f"the SDK command {program!r} is a folder ({path}); name the conformance host "
                "program inside it (for example its `conform` script)"
            )
        if not path.is_file():
            raise CommandError(f"the SDK command {program!r} does not exist ({path})")
        if not os.access(path, os.X_OK):
            raise CommandError(f"the SDK command {program!r} is not executable ({path})")
        argv[0] = str(path)
    elif shutil.which(program) is None:
        raise CommandError(f"the SDK command {program!r} is not on PATH")
    return argv


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for SDK hosts: ours, plus RYUSEN_PYTHON naming this interpreter."""
    env = dict(os.environ)
    env["RYUSEN_PYTHON"] = sys.executable
    env.update(extra or {})
    return env


class SubprocessTransport(Transport):
    """A started SDK host process speaking frames on stdin/stdout."""

    output_ends_with_host = True

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr_capacity: int = STDERR_CAPACITY,
    ) -> None:
        super().__init__(stderr_capacity)
        self.argv = list(argv)
        self._mark = containment.new_mark()
        self._decoder = FrameDecoder()
        self._chunk = bytearray(READ_CHUNK)
        self._chunk_view = memoryview(self._chunk)
        self._frames: deque[bytes] = deque()
        self._eof = False
        self._closed = False
        self._close_lock = threading.Lock()
        containment.become_subreaper()
        global _starting
        with _live_lock:
            _starting += 1
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env={**child_environment(env), **self._mark},
                start_new_session=True,
                bufsize=0,
                preexec_fn=containment.death_signal(),  # the host dies with the bench
            )
        except (OSError, subprocess.SubprocessError) as exc:
            with _live_lock:
                _starting -= 1
            raise CommandError(f"cannot start {shlex.join(self.argv)}: {exc}") from None
        with _live_lock:
            _starting -= 1
            _live.add(self)
            containment.hosts.add(self.process.pid)
        self._stdin = self.process.stdin.fileno()  # type: ignore[union-attr]
        self._stdout = self.process.stdout.fileno()  # type: ignore[union-attr]
        os.set_blocking(self._stdin, False)
        os.set_blocking(self._stdout, False)
        self._reader = select.poll()  # one fd: a bare poll is cheaper than a selector
        self._reader.register(self._stdout, select.POLLIN)
        self._writer = selectors.DefaultSelector()  # writable input, or output to drain meanwhile
        self._writer.register(self._stdin, selectors.EVENT_WRITE)
        self._writer.register(self._stdout, selectors.EVENT_READ)
        self._stop_stderr = threading.Event()
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr, name=f"sdk-stderr-{self.process.pid}", daemon=True
        )
        self._stderr_thread.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, payload: bytes, deadline: float | None = None) -> None:
        """Write one frame; TransportTimeout if the SDK stops reading, TransportClosed if gone."""
        self.send_many([payload], deadline)

    def send_many(self, payloads: Sequence[bytes], deadline: float | None = None) -> None:
        """Write several frames with as few system calls as the pipe allows."""
        self._check_open()
        data = b"".join([encode_frame(payload) for payload in payloads])
        try:
            written = os.write(self._stdin, data)
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, ConnectionResetError):
            raise TransportClosed(self._exit_detail("closed its input")) from None
        if written < len(data):  # the pipe is full: wait for room, draining the SDK meanwhile
            self._write_rest(memoryview(data)[written:], deadline)

    def _write_rest(self, view: memoryview, deadline: float | None) -> None:
        """Write the rest of a batch as the pipe takes it; time out if the SDK stops reading."""
        while view:
            try:
                written = os.write(self._stdin, view)
                view = view[written:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                raise TransportClosed(self._exit_detail("closed its input")) from None
            events = self._writer.select(_remaining(deadline))
            if not events and _remaining(deadline) == 0:
                raise TransportTimeout("stopped reading its input before the deadline")
            if any(mask & selectors.EVENT_READ for _, mask in events):
                self._read_ahead()  # the SDK writes while we write: drain it, or both pipes fill

    def _read_ahead(self) -> None:
        """Read what the SDK has written into the frame queue; problems surface at `receive`."""
        if self._eof or self._decoder.broken is not None:
            return
        try:
            data = self._read_chunk()
        except BlockingIOError:
            return
        except OSError:
            self._eof = True
            return
        if not data:
            self._eof = True
            self._writer.unregister(self._stdout)
            return
        try:
            self._frames.extend(self._decoder.feed(data))
        except FrameError:
            self._writer.unregister(self._stdout)  # the decoder keeps the error for `receive`

    def receive(self, deadline: float | None = None) -> bytes:
        """Return the next frame's payload; raise on timeout, end of stream or a framing error."""
        self._check_open()
        while not self._frames:
            if self._decoder.broken is not None:
                raise self._decoder.broken
            if self._eof:
                pending = self._decoder.pending_bytes
                what = (
                    f"closed its output inside a frame ({pending} bytes pending)"
                    if pending
                    else ("closed its output")
                )
                raise TransportClosed(self._exit_detail(what))
            if not self._reader.poll(_milliseconds(_remaining(deadline))):
                if _remaining(deadline) == 0:  # polled at least once, even for a past deadline
                    raise TransportTimeout("sent no complete frame before the deadline")
                continue
            try:
                data = self._read_chunk()
            except BlockingIOError:
                continue
            except OSError as exc:
                raise TransportClosed(f"output unreadable: {exc}") from None
            if not data:
                self._eof = True
                continue
            self._frames.extend(self._decoder.feed(data))
        return self._frames.popleft()

    def ready(self) -> bool:
        """Whether `receive` would return or fail at once (a frame, end of stream, bad framing).

        Polls without waiting and raises nothing: the cheap way to ask "anything more?".
        """
        if self._closed or self._frames or self._eof or self._decoder.broken is not None:
            return True
        try:
            return bool(self._reader.poll(0))
        except (OSError, ValueError):  # closed from another thread meanwhile
            return True

    def _read_chunk(self) -> memoryview:
        """Read what stdout holds (up to READ_CHUNK bytes) into the reused buffer; empty at EOF.

        The view is only valid until the next read: the decoder copies what it keeps.
        """
        count = os.readv(self._stdout, [self._chunk])
        return self._chunk_view[:count]

    def exit_status(self) -> int | None:
        """The host's exit status if it has exited (on its own, unless `close` ran), else None."""
        return self.process.poll()

    def exit_note(self, *, hung: bool = False) -> str | None:
        """`the host process itself had already exited with status 3` (None while it runs).

        For a hang that is the real clue: an exited host whose output stays open has left a
        process behind that holds it.
        """
        return describe_exit(self.process.poll(), hung=hung)

    def stderr_tail(self) -> str:
        """The kept stderr; once the process has exited, first let the drain reach end of file.

        While the process runs, the drain may lag behind what it wrote: `close` first for the
        complete tail.
        """
        if self.process.poll() is not None and self._stderr_thread.is_alive():
            self._stderr_thread.join(timeout=STDERR_SETTLE_SECONDS)
        return self.stderr.text()

    def close(self, wait: float = 0.0) -> None:
        """End the SDK: close its input, give it `wait` seconds to exit, then kill what is left.

        Always reaps the process and stops the stderr thread; safe to call more than once.
        """
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        _close_quietly(self.process.stdin)
        if wait > 0:
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                pass
        self._kill_group()
        self._stop_stderr.set()
        self._stderr_thread.join(timeout=1.0)
        _close_quietly(self.process.stdout)
        _close_quietly(self.process.stderr)
        self._writer.close()
        with _live_lock:
            _live.discard(self)
            containment.hosts.discard(self.process.pid)
            if not _live and not _starting:  # no host left: what was re-parented to the
                containment.kill_orphans()  # bench is no host's any more (held: see _starting)

    def _kill_group(self) -> None:
        """SIGTERM the group and every descendant, a short grace, then SIGKILL them all.

        Descendants are found by the process tree and by the mark in their environment, so a
        process that left the group (`setsid`) and was orphaned is found too (containment).
        """
        group = self.process.pid  # start_new_session: the leader's pid is the group id
        escaped = containment.descendants(self.process.pid, self._mark)
        if self.process.poll() is None:
            _signal_group(group, signal.SIGTERM)
            containment.signal_all(escaped, signal.SIGTERM)
            try:
                self.process.wait(TERM_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        # stragglers that ignored SIGTERM or outlived the leader, in the group or out of it
        _signal_group(group, signal.SIGKILL)
        escaped |= containment.descendants(self.process.pid, self._mark)
        containment.signal_all(escaped, signal.SIGKILL)
        self.process.wait()
        containment.reap(escaped)

    def _drain_stderr(self) -> None:
        """Copy stderr into the ring until end of file or `close`.

        On `close` the group is already dead, so what the pipe still holds was written before
        the kill: often the host's last words before it misbehaved. It is read, not dropped.
        """
        stream = self.process.stderr
        assert stream is not None
        fd = stream.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while not self._stop_stderr.is_set():
                if selector.select(0.2) and not self._read_stderr(fd):
                    return
            for _ in range(FINAL_STDERR_READS):
                if not selector.select(0) or not self._read_stderr(fd):
                    return

    def _read_stderr(self, fd: int) -> bool:
        """One read into the ring; False at end of file or when stderr became unreadable."""
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.stderr.write(data)
        return True

    def _exit_detail(self, what: str) -> str:
        try:
            status = self.process.wait(EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            return what
        return f"{what}; {exit_text(status)}"

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError("the SDK process was already closed")


def exit_text(status: int) -> str:
    """A process exit status in words: `exited with status 3`, `killed by SIGKILL`."""
    if status >= 0:
        return f"exited with status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = str(-status)
    return f"killed by {name}"


def describe_exit(status: int | None, *, hung: bool = False) -> str | None:
    """The clause `the host process itself had already exited with status 3` (None: running)."""
    if status is None:
        return None
    note = f"the host process itself had already {'been ' if status < 0 else ''}"
    note += exit_text(status)
    if hung:
        note += ", but its pipes stayed open (a process it started still holds them?)"
    return note


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


def _milliseconds(seconds: float | None) -> int | None:
    """A poll timeout: None waits forever; a fraction of a millisecond rounds up."""
    return None if seconds is None else math.ceil(seconds * 1000)


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _close_quietly(stream: object) -> None:
    try:
        stream.close()  # type: ignore[union-attr]
    except (OSError, AttributeError):
        pass


def close_all() -> None:
    """Kill every SDK process still running (atexit, Ctrl-C): none may outlive the run."""
    with _live_lock:
        transports = list(_live)
    for transport in transports:
        try:
            transport.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
    with _live_lock:
        if not _starting:
            containment.kill_orphans()


atexit.register(close_all)
