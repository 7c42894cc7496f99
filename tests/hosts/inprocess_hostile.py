"""Hostile in-process hosts (`--sdk python:tests/hosts:inprocess_hostile:FUNCTION`), each the
Python reference host with one misbehaviour an in-process host can commit against the bench
that runs it (issue 19 item 6 and 9)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runners" / "python"))

from conform_host import host as reference  # noqa: E402


def exits(reader: BinaryIO, writer: BinaryIO) -> int:
    """`sys.exit(0)` instead of serving."""
    sys.exit(0)


def os_exits(reader: BinaryIO, writer: BinaryIO) -> int:
    """`os._exit(0)` instead of serving: the whole process would end, no report written."""
    os._exit(0)


def os_exits_on_a_thread_of_its_own(reader: BinaryIO, writer: BinaryIO) -> int:
    """Serves, after starting a thread that calls `os._exit(0)` a moment later."""
    threading.Thread(target=lambda: (time.sleep(0.3), os._exit(0)), daemon=True).start()
    time.sleep(0.6)
    return reference.serve(reader, writer)


def leaves_a_thread(reader: BinaryIO, writer: BinaryIO) -> int:
    """Serves, leaving a non-daemon thread that never ends (it kept the bench alive for ever)."""
    threading.Thread(target=lambda: time.sleep(3600), name="left-behind", daemon=False).start()
    return reference.serve(reader, writer)


def changes_folder(reader: BinaryIO, writer: BinaryIO) -> int:
    """Serves from another current folder: a relative report path must not move with it."""
    os.chdir(os.environ.get("RYUSEN_HOSTILE_CHDIR", "/"))
    return reference.serve(reader, writer)


def closes_stdio(reader: BinaryIO, writer: BinaryIO) -> int:
    """Closes the bench's own sys.stdout and sys.stderr (its process's), then serves: the bench
    gave a fatal dump and no report (issue 36)."""
    sys.stdout.close()
    sys.stderr.close()
    return reference.serve(reader, writer)
