"""Finding every process an SDK host started, so none outlives the run.

A process-group kill misses a descendant that called `setsid()` (it has its own group and
session). Three things catch it (Linux; elsewhere only the group kill applies):

- the bench makes itself a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`), so an orphaned
  descendant is re-parented to the bench instead of to init, and the bench can reap it;
- each host is started with a unique mark in its environment (`RYUSEN_CONFORM_HOST`), which
  its descendants inherit: `/proc` is scanned for it when the host is closed;
- the process tree under the host is walked through `/proc` as well, for a descendant that
  cleared its environment while its parent still lives.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import time
import uuid
from pathlib import Path

MARK_VARIABLE = "RYUSEN_CONFORM_HOST"
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_subreaper = False


def new_mark() -> dict[str, str]:
    """The environment entry that marks one host and all it starts."""
    return {MARK_VARIABLE: uuid.uuid4().hex}


def become_subreaper() -> None:
    """Make this process the reaper of orphaned descendants (Linux; once; best effort)."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    _subreaper = True
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def descendants(root: int, mark: dict[str, str]) -> set[int]:
    """Live processes below `root` in the tree, or carrying `mark` in their environment."""
    if not _PROC.is_dir():
        return set()
    needle = "=".join(next(iter(mark.items()))).encode()
    me = os.getpid()
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in (me, root):
            continue
        pid = int(entry.name)
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if fields[0] == "Z":  # a zombie: nothing left to kill, only to reap
            if int(fields[1]) == me:
                found.add(pid)
            continue
        parents[pid] = int(fields[1])
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
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
