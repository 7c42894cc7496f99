"""Protocol versions: `MAJOR.MINOR` strings, accepted by major (docs/protocol.md section 2)."""

from __future__ import annotations

import functools
import re

#: The version the bench speaks (docs/protocol.md §2): 1.1 adds what the project settled where
#: RFD 2 is silent after the first corpus (docs/decisions.md "Protocol 1.1").
PROTOCOL_VERSION = "1.1"
#: The first minor of the major: what a fixture needs unless it says `protocol_version`, and what
#: its sends carry unless a send says otherwise (docs/fixtures.md).
BASE_VERSION = "1.0"
#: Every minor this bench knows, oldest first.
KNOWN_VERSIONS: tuple[str, ...] = ("1.0", "1.1")
SUPPORTED_MAJOR = 1
#: The optional protocol capabilities (the same in 1.0 and 1.1) (docs/protocol.md §7.3), sorted.
CAPABILITIES: tuple[str, ...] = (
    "child_invocations",
    "compensation",
    "event_emission",
    "event_waits",
    "json_convenience",
    "timers",
)
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


def parse_version(text: object) -> tuple[int, int]:
    """Parse `MAJOR.MINOR`; raise ValueError for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"protocol version must match MAJOR.MINOR, got {text!r}")
    return _parse_text(text)


@functools.lru_cache(maxsize=64)
def _parse_text(text: str) -> tuple[int, int]:
    """`parse_version` of a string, remembered: a run meets a few versions, each once per case."""
    if not _VERSION.fullmatch(text):
        raise ValueError(f"protocol version must match MAJOR.MINOR, got {text!r}")
    major, minor = text.split(".")
    return int(major), int(minor)


def negotiated_version(offered: object) -> str:
    """What the bench acknowledges (§7.2): its own version, or the worker's highest minor of the
    same major when that is older. Anything unreadable in `versions` counts as not offered."""
    ours = parse_version(PROTOCOL_VERSION)
    minors = []
    for text in offered if isinstance(offered, list) else ():
        try:
            major, minor = parse_version(text)
        except ValueError:
            continue
        if major == ours[0]:
            minors.append(minor)
    if not minors or max(minors) >= ours[1]:
        return PROTOCOL_VERSION
    return f"{ours[0]}.{max(minors)}"


def is_supported(text: object) -> bool:
    """True when `text` is a well-formed version of the major this bench speaks."""
    try:
        return parse_version(text)[0] == SUPPORTED_MAJOR
    except ValueError:
        return False
