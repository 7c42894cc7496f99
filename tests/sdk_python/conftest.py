"""Make `ryusen_sdk` and the conformance host importable without installation."""

from __future__ import annotations

import sys
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runners" / "python"
if str(RUNNER) not in sys.path:
    sys.path.insert(0, str(RUNNER))
