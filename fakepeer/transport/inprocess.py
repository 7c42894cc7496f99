"""An SDK host written in Python, run inside the bench's own process (`--sdk python:...`).

The host is a function `serve(reader, writer) -> int | None` that speaks the same framed
protocol as a subprocess host does on stdin/stdout (§12): it reads frames from `reader` (a
binary stream: `read(n)` returns up to n bytes, b"" at end of input) and writes frames to
`writer` (`write` and `flush`), until `conform.shutdown` or end of input. It runs on its own
thread; the bench talks to it through two in-memory pipes, so the fixtures, the session and
every check run unchanged. What it cannot do that a process can: be killed. A host that hangs
is abandoned on its (daemon) thread once the case times out; its pipes are closed so it ends
at its next read or write. It runs with the bench's authority: `sys.exit` and `SystemExit` (at
import or in the function) and `os._exit` on its threads end the host, not the bench; threads it
leaves running do not keep the bench alive (`exiting_with`: the process ends without waiting for
them, with a one-line note); what no thread can stop (`os.kill` of the bench, `os.abort`, native
code holding the interpreter) is the host's to avoid.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from fakepeer.transport.base import Transport
from fakepeer.transport.errors import TransportClosed, TransportError, TransportTimeout
from fakepeer.transport.framing import FrameDecoder, encode_frame

#: A Python conformance host: serves frames from `reader` to `writer`; its exit status.
HostFunction = Callable[[BinaryIO, BinaryIO], "int | None"]
#: Stack for the host's thread: deeply nested frames must reach the host's own refusal.
HOST_STACK_BYTES = 256 * 1024 * 1024
PREFIX = "python:"


class PythonHostError(ValueError):
    """`--sdk python:...` names no usable host function."""


def load_host(spec: str) -> HostFunction:
    """`python:[PATH:]MODULE:FUNCTION` -> the function; PATH is added to sys.path first."""
    parts = spec.removeprefix(PREFIX).split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise PythonHostError(
            f"--sdk {spec!r}: expected python:MODULE:FUNCTION or python:PATH:MODULE:FUNCTION"
        )
    *path, module_name, function_name = parts
    if path:
        folder = Path(path[0]).resolve()
        if not folder.is_dir():
            raise PythonHostError(f"--sdk {spec!r}: {path[0]} is not a folder")
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: the host's, in one line
        what = f"it exited ({exc.code!r})" if isinstance(exc, SystemExit) else str(exc)
        raise PythonHostError(f"--sdk {spec!r}: cannot import {module_name}: {what}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise PythonHostError(f"--sdk {spec!r}: {module_name} has no function {function_name}")
    return function


class _Pipe:
    """A one-way in-memory byte pipe with blocking reads (the host's stdin or stdout)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._ready = threading.Condition()
        self._closed = False

    def write(self, data: bytes) -> int:
        with self._ready:
            if self._closed:
                raise BrokenPipeError("the bench closed this pipe")
            self._data += data
            self._ready.notify_all()
        return len(data)

    def flush(self) -> None:
        return None

    def read(self, size: int = -1, deadline: float | None = None) -> bytes:
        """Up to `size` bytes once any are there; b"" at end; TimeoutError past `deadline`."""
        with self._ready:
            while not self._data and not self._closed:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    raise TimeoutError
                self._ready.wait(wait)
            size = len(self._data) if size is None or size < 0 else size
            chunk = bytes(self._data[:size])
            del self._data[:size]
            return chunk

    def has_data(self) -> bool:
        with self._ready:
            return bool(self._data) or self._closed

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()


class InProcessTransport(Transport):
    """Runs `host(reader, writer)` on a thread and frames through two in-memory pipes."""

    output_ends_with_host = True  # the host's pipe is closed when its function returns

    def __init__(self, host: HostFunction, name: str = "python-host") -> None:
        super().__init__()
        self._to_host, self._from_host = _Pipe(), _Pipe()
        self._decoder = FrameDecoder()
        self._frames: deque[bytes] = deque()
        self._status: int | None = None
        self._failure = ""
        self._closed = False
        self._thread = _start_thread(lambda: self._serve(host), name)

    def _serve(self, host: HostFunction) -> None:
        _guard_exit()
        try:
            status = host(self._to_host, self._from_host)  # type: ignore[arg-type]
            self._status = 0 if status is None else int(status)
        except BaseException as exc:  # noqa: BLE001 - the host's crash (or exit), as its stderr
            self._failure = f"{type(exc).__name__}: {exc}"
            self.stderr.write(f"the host function raised {self._failure}\n".encode())
            self._status = 1
        finally:
            self._from_host.close()

    def send(self, payload: bytes, deadline: float | None = None) -> None:
        self.send_many([payload], deadline)

    def send_many(self, payloads: Sequence[bytes], deadline: float | None = None) -> None:
        """The pipe has no capacity limit, so a write never waits (the deadline is moot)."""
        self._check_open()
        try:
            self._to_host.write(b"".join(encode_frame(payload) for payload in payloads))
        except BrokenPipeError:
            raise TransportClosed(self._ended("closed its input")) from None

    def receive(self, deadline: float | None = None) -> bytes:
        self._check_open()
        while not self._frames:
            try:
                data = self._from_host.read(-1, deadline)
            except TimeoutError:
                raise TransportTimeout("sent no complete frame before the deadline") from None
            if not data:
                pending = self._decoder.pending_bytes
                what = f"inside a frame ({pending} bytes pending)" if pending else ""
                raise TransportClosed(self._ended(f"closed its output {what}".strip()))
            self._frames.extend(self._decoder.feed(data))
        return self._frames.popleft()

    def ready(self) -> bool:
        return self._closed or bool(self._frames) or self._from_host.has_data()

    def exit_status(self) -> int | None:
        return self._status

    def exit_note(self, *, hung: bool = False) -> str | None:
        if self._status is None:
            return None
        how = f"raised {self._failure}" if self._failure else f"returned {self._status}"
        return f"the host function had already {how}"

    def close(self, wait: float = 0.0) -> None:
        """End of input for the host; wait up to `wait` seconds for its function to return."""
        if self._closed:
            return
        self._closed = True
        self._to_host.close()
        self._thread.join(max(0.0, wait))
        self._from_host.close()  # a host still running fails at its next write

    def _ended(self, what: str) -> str:
        self._thread.join(0.2)
        note = self.exit_note()
        return f"{what}; {note}" if note else what

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError("the in-process host was already closed")


def _start_thread(target: Callable[[], None], name: str) -> threading.Thread:
    """A daemon thread with a large stack, like a host process's main thread."""
    lock = _STACK_LOCK
    with lock:
        previous = threading.stack_size(HOST_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    return thread


_STACK_LOCK = threading.Lock()
_REAL_EXIT = os._exit


class HostExited(SystemExit):
    """`os._exit` called on a thread other than the bench's main one: only that thread ends."""


def _guarded_exit(status: int) -> None:
    """`os._exit` while in-process hosts run: from the main thread, the real one; from any
    other thread (a host's, or one it started) it ends that thread only, so a host cannot end
    the bench, with status 0 and no report. (`os.kill(os.getpid(), ...)`, `os.abort()` and
    code that blocks the interpreter are beyond this: an in-process host runs with the bench's
    own authority.)"""
    if threading.current_thread() is threading.main_thread():
        _REAL_EXIT(status)
    raise HostExited(status)


def _guard_exit() -> None:
    os._exit = _guarded_exit  # type: ignore[assignment]
    if threading.excepthook is not _thread_ended:
        _HOOKS.append(threading.excepthook)
        threading.excepthook = _thread_ended
        with contextlib.suppress(RuntimeError):  # the interpreter is already shutting down
            threading._register_atexit(_leave_lingering_threads)  # type: ignore[attr-defined]


#: The status the process exits with, as its entry point (the command line, the pytest
#: plugin) said: needed to exit with it when a host's thread is left behind.
_STATUS: list[int] = []


def exiting_with(status: int) -> None:
    """The entry point is about to end the process with `status`: say it, so that threads an
    in-process host left running cannot hold the process (the interpreter would wait for
    every non-daemon thread for ever, after the reports and the summary were written)."""
    _STATUS[:] = [int(status)]


def _leave_lingering_threads() -> None:
    """At interpreter exit, before it waits for non-daemon threads: when any still run (only an
    in-process host starts them), say so in one line and end the process now with the status
    the entry point gave (1 when none was given: no verdict is claimed that nobody made)."""
    lingering = [
        thread
        for thread in threading.enumerate()
        if thread is not threading.current_thread() and not thread.daemon and thread.is_alive()
    ]
    if not lingering:
        return
    status = _STATUS[0] if _STATUS else 1
    names = ", ".join(thread.name for thread in lingering[:3])
    with contextlib.suppress(Exception):
        sys.stderr.write(
            f"ryusen-conform: warning: {len(lingering)} thread(s) an in-process host started "
            f"still run ({names}); exiting with status {status} without waiting for them\n"
        )
    end_process(status)


def end_process(status: int) -> None:
    """End the process with `status` at once, after what the interpreter's exit would still
    have done (exit functions: coverage, logging; flushing), without the rest of that exit
    (waiting for threads; after an interrupt, a SIGINT it can still end the process by)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _REAL_EXIT(status)


_HOOKS: list = []


def _thread_ended(args: threading.ExceptHookArgs) -> None:
    """A thread the guard ended is said in one line; anything else as before."""
    if isinstance(args.exc_value, HostExited):
        name = args.thread.name if args.thread is not None else "?"
        sys.stderr.write(
            f"ryusen-conform: thread {name} of an in-process host called "
            f"os._exit({args.exc_value.code}): only that thread ended\n"
        )
        return
    _HOOKS[0](args)
