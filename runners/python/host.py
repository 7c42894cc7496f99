"""Conformance host for the Ryusen Python SDK (docs/protocol.md §12).

Started by the bench as `runners/python/conform`; speaks length-prefixed envelopes on
stdin/stdout and logs to stderr only.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conform_host.entry import run_with_deep_stack  # noqa: E402

if __name__ == "__main__":
    sys.exit(run_with_deep_stack())
