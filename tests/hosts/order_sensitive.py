#!/usr/bin/env python3
"""A host whose hand-rolled parser wants `version` as the first member of every frame.

Every fixture as written passes against it (the bench writes `version` first); only the derived
variants that reorder or re-spell the JSON (`--variants reordered,respelled`) catch it.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runners" / "python"))

from conform_host import entry  # noqa: E402
from conform_host import host as reference  # noqa: E402
from ryusen_sdk import ProtocolError  # noqa: E402

original = reference.Host.handle


def handle(self: reference.Host, payload: bytes) -> None:
    if not payload.startswith(b'{"version"'):
        self.send_error(ProtocolError("protocol.malformed", "/version", "version comes first"), "-")
        return
    original(self, payload)


reference.Host.handle = handle
sys.exit(entry.main())  # framed, or HTTP when asked
