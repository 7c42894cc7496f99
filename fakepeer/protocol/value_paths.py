"""Where each kind's tagged values sit: the catalog's `values` paths walked over an envelope.

The schema check, the reference decoder and the recorder find a message's tagged values (§3)
here, so a new position is written once, in the kind's catalog row (messages.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from fakepeer.protocol.messages import KINDS


def value_positions(envelope: Any) -> Iterator[tuple[str, Any]]:
    """(pointer, value) of every tagged value the envelope's kind carries, in document order.

    The positions are the catalog's `values` of the kind. Tolerant of broken bodies: positions
    that are missing are simply not yielded.
    """
    if not isinstance(envelope, dict):
        return
    body = envelope.get("body")
    paths = _VALUE_PATHS.get(envelope.get("kind"))  # type: ignore[arg-type]
    if not paths or not isinstance(body, dict):
        return
    for path in paths:
        yield from _walk(body, path, "/body")


_Segment = tuple[str, str | None, str | None]  # (member or "*", condition member, its value)
_ITEM = re.compile(r"\*(?:\[(\w+)=([^\]]*)\])?")


def _segments(path: str) -> tuple[_Segment, ...]:
    segments = []
    for part in path.split("/"):
        item = _ITEM.fullmatch(part)
        segments.append(("*", item.group(1), item.group(2)) if item else (part, None, None))
    return tuple(segments)


_VALUE_PATHS: Final = {
    kind.name: tuple(_segments(path) for path in kind.values)
    for kind in KINDS.values()
    if kind.values
}


def _walk(node: Any, path: tuple[_Segment, ...], pointer: str) -> Iterator[tuple[str, Any]]:
    if not path:
        yield pointer, node
        return
    (member, when, equals), rest = path[0], path[1:]
    if member == "*":
        for index, item in enumerate(node if isinstance(node, list) else ()):
            if when is None or (isinstance(item, dict) and item.get(when) == equals):
                yield from _walk(item, rest, f"{pointer}/{index}")
    elif isinstance(node, dict) and member in node:
        yield from _walk(node[member], rest, f"{pointer}/{member}")
