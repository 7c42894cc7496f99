"""The zygote side of `zygote_client.py`: a mutant host that forks a fresh host per client.

One loop, one thread (forking a threaded process is unsafe): accept a client with its three
file descriptors, fork a child that serves on them, send the child's pid; report each child's
exit status to its client; kill a child whose client went away (the bench stopped it).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
from collections.abc import Callable


def serve_forks(path: str, serve: Callable[[], int]) -> int:
    """Listen on `path`; per client, fork `serve()` on the client's stdin, stdout and stderr."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    clients: dict[int, socket.socket] = {}  # child pid -> its client's connection
    by_fd: dict[int, int] = {}  # connection fd -> child pid
    signal.signal(signal.SIGTERM, lambda *_: _stop(clients))
    while True:
        readable, _, _ = select.select([listener, *clients.values()], [], [], 0.05)
        for ready in readable:
            if ready is listener:
                conn, _ = listener.accept()
                try:
                    pid = _fork(conn, listener, serve)
                except OSError:  # the client went away before its host started
                    conn.close()
                    continue
                if pid:
                    clients[pid] = conn
                    by_fd[conn.fileno()] = pid
            elif _gone(ready):  # the client died: so does its host
                _kill(by_fd.get(ready.fileno(), 0))
        _reap(clients, by_fd)


def _gone(conn: socket.socket) -> bool:
    try:
        return not conn.recv(64)
    except OSError:
        return True


def _fork(conn: socket.socket, listener: socket.socket, serve: Callable[[], int]) -> int:
    _, fds, _, _ = socket.recv_fds(conn, 64, 3)
    if len(fds) != 3:
        conn.close()
        return 0
    pid = os.fork()
    if pid == 0:
        listener.close()
        conn.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = os.fdopen(0, "r", closefd=False)
        status = 1
        try:
            status = serve()
        finally:
            sys.stderr.flush()
            os._exit(status if isinstance(status, int) else 1)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _reap(clients: dict[int, socket.socket], by_fd: dict[int, int]) -> None:
    while clients:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = clients.pop(pid, None)
        if conn is None:
            continue
        by_fd.pop(conn.fileno(), None)
        code = os.waitstatus_to_exitcode(status)
        try:
            conn.sendall(f"{code if code >= 0 else 128 - code}\n".encode())
        except OSError:
            pass
        conn.close()


def _kill(pid: int) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _stop(clients: dict[int, socket.socket]) -> None:
    for pid in list(clients):
        _kill(pid)
    os._exit(0)
