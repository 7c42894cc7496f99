"""Finding every process an SDK host started, so none outlives the run.

A process-group kill misses a descendant that called `setsid()` (it has its own group and
session). Three things catch it (Linux; elsewhere only the group kill applies):

- the bench makes itself a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`), so an orphaned
  descendant is re-parented to the bench instead of to init, and the bench can reap it;
- each host is started with a unique mark in its environment (`RYUSEN_CONFORM_HOST`), which
  its descendants inherit: `/proc` is scanned for it when the host is closed;
- the process tree under the host is walked through `/proc` as well, for a descendant that
  cleared its environment while its parent still lives;
- once no host is left, the bench's own children that it did not start (orphans re-parented to
  it, e.g. a double-forked `setsid env -i` daemon, which carries no mark and has no parent in
  any host's tree) are killed and reaped (`orphans`);
- each host is started with `PR_SET_PDEATHSIG` (SIGKILL), so it dies when the bench is killed
  (even by SIGKILL, when no atexit hook runs).

Where `prctl` is unavailable the bench says so once on stderr (one line) and keeps the rest.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

MARK_VARIABLE = "RYUSEN_CONFORM_HOST"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_tried = False
#: Whether this process became a subreaper (only then are orphans looked for).
_subreaper = False
#: Children this process had when it became a subreaper: never taken for orphans.
_preexisting: set[int] = set()
#: Host processes started and not yet waited for: never taken for orphans (their status is
#: the transport's to collect).
hosts: set[int] = set()
_warned = False


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int
    return function


def _warn_once(what: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(
            f"ryusen-conform: note: {what}; a host's descendants that leave its process group "
            "are still found through /proc where there is one",
            file=sys.stderr,
        )


def new_mark() -> dict[str, str]:
    """The environment entry that marks one host and all it starts."""
    return {MARK_VARIABLE: uuid.uuid4().hex}


def become_subreaper() -> None:
    """Make this process the reaper of orphaned descendants (Linux; once; best effort)."""
    global _tried, _subreaper
    if _tried:
        return
    _tried = True
    prctl = _prctl()
    if prctl is None or prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _warn_once("prctl(PR_SET_CHILD_SUBREAPER) is unavailable here, so orphaned host "
                   "descendants are not re-parented to the bench")  # fmt: skip
        return
    _preexisting.update(_children())
    _subreaper = True


def death_signal() -> Callable[[], None] | None:
    """A `preexec_fn` making the child die (SIGKILL) with this process, or None (no prctl)."""
    prctl = _prctl()
    if prctl is None:
        _warn_once("prctl(PR_SET_PDEATHSIG) is unavailable here, so a host does not die with a "
                   "killed bench")  # fmt: skip
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the bench died before the call: follow it now
            os._exit(137)

    return preexec


def _children() -> set[int]:
    """The pids of this process's children, zombies included (from /proc)."""
    me = os.getpid()
    return {pid for pid, parent, _session in _table() if parent == me}


def _table() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every process /proc shows (empty without /proc)."""
    rows = []
    for pid in _pids():
        try:
            fields = _stat_fields(pid)
            rows.append((pid, int(fields[1]), int(fields[3])))
        except (OSError, IndexError, ValueError):
            continue
    return rows


def _pids() -> list[int]:
    """Every process /proc shows (none without /proc)."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    return [int(name) for name in names if name.isdigit()]


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state, parent pid, group, session)."""
    return _read(pid, "stat").rsplit(b")", 1)[-1].split()


def _read(pid: int, name: str) -> bytes:
    """A small /proc file of one process, read with bare system calls: every host closed scans
    every process twice, so this is on the path of each case that ends a session."""
    fd = os.open(f"{_PROC}/{pid}/{name}", os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def orphans() -> set[int]:
    """Children of this process that it did not start: descendants of hosts re-parented to it as
    a subreaper (a double-forked daemon). Only those outside this process's session, so a
    child that something else in this process started in the usual way is never one."""
    if not _subreaper or not sys.platform.startswith("linux"):
        return set()
    me, session = os.getpid(), os.getsid(0)
    return {
        pid
        for pid, parent, sid in _table()
        if parent == me and sid != session and pid not in _preexisting and pid not in hosts
    }


def kill_orphans() -> None:
    """Kill and reap every orphan (`orphans`): called once no host is left, and at exit."""
    found = orphans()
    if found:
        signal_all(found, signal.SIGKILL)
        reap(found)


def descendants(root: int, mark: dict[str, str]) -> set[int]:
    """Live processes below `root` in the tree, or carrying `mark` in their environment."""
    entry = b"\0" + "=".join(next(iter(mark.items()))).encode() + b"\0"
    me = os.getpid()
    parents: dict[int, int] = {}
    found: set[int] = set()
    for pid in _pids():
        if pid in (me, root):
            continue
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue
        if fields[0] == b"Z":  # a zombie: nothing left to kill, only to reap
            if int(fields[1]) == me:
                found.add(pid)
            continue
        parents[pid] = int(fields[1])
        try:
            if entry in b"\0" + _read(pid, "environ") + b"\0":  # one whole variable
                found.add(pid)
        except OSError:
            pass
    below = {root}
    grew = True
    while grew:  # the tree under root, iteratively
        added = {pid for pid, parent in parents.items() if parent in below and pid not in below}
        below |= added
        grew = bool(added)
    return (found | below) - {root}


def signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def reap(pids: set[int], seconds: float = 0.5) -> None:
    """Collect the exit status of those that became our children (orphans re-parented to us),
    waiting at most `seconds` for killed ones to die."""
    waiting = set(pids)
    deadline = time.monotonic() + seconds
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):  # not our child (someone else reaps it), or gone
                done = pid
            if done:
                waiting.discard(pid)
        if not waiting or time.monotonic() >= deadline:
            return
        time.sleep(0.01)
