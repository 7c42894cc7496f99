"""`ryusen-conform fuzz`: property-based fuzzing of an SDK's value codec through `conform.echo`.

The names below are loaded on first use: importing `fakepeer.fuzz.cli` (every `ryusen-conform`
command mounts it) must not import hypothesis (~0.4 s), which only a campaign needs.
"""

from __future__ import annotations

import importlib
from typing import Any

_FROM = {
    "CampaignResult": "campaign",
    "Failure": "campaign",
    "FuzzSetupError": "campaign",
    "run_campaign": "campaign",
    "FuzzCase": "strategies",
    "malformed_cases": "strategies",
    "portable_cases": "strategies",
    "portable_values": "strategies",
}

__all__ = sorted(_FROM)


def __getattr__(name: str) -> Any:
    """`from fakepeer.fuzz import run_campaign` imports the module that defines it, then."""
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"fakepeer.fuzz.{_FROM[name]}"), name)
