#!/usr/bin/env python3
"""A 1.0 host: the Python reference host offering protocol 1.0 only (`versions: ["1.0"]`).

Why: an SDK built against the 1.0 corpus must see every 1.1 fixture skipped with the reason,
never failed (docs/fixtures.md `protocol_version`); this is that SDK, byte for byte the
reference one apart from the version it speaks.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runners" / "python"))

from ryusen_sdk import codec, worker  # noqa: E402

codec.PROTOCOL_VERSION = worker.PROTOCOL_VERSION = "1.0"

from conform_host.entry import run_with_deep_stack  # noqa: E402

sys.exit(run_with_deep_stack())
