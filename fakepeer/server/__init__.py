"""The model server: Ryusen's run loop played against any conformance host on a virtual clock.

RFD 2: "The server owns run state, scheduling, retries, timers, flow control, compensation order,
and history." This package plays that side over the existing session and transport layers, so a
whole run (discovery, targeted forward execution, retries, compensation, timers, waits, children,
emissions, faults) can be driven end to end against an SDK. Nothing sleeps: time is virtual.
Every behaviour names the RFD 2 sentence it implements (see `rules.RULES`).
"""

from __future__ import annotations

import importlib
from typing import Any

from fakepeer.server.script import Fault, ScriptItem

__all__ = ["Fault", "ModelServer", "RunReport", "ScriptItem"]


def __getattr__(name: str) -> Any:
    """The model server loads on first use: every command mounts `simulate`, few play it."""
    if name in ("ModelServer", "RunReport"):
        return getattr(importlib.import_module("fakepeer.server.loop"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
