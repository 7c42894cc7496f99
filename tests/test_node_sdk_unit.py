"""The Node reference SDK's own unit tests (`node --test`) run as part of the one test command."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE_RUNNER = Path(__file__).resolve().parent.parent / "runners" / "node"


def test_node_sdk_unit_tests_pass() -> None:
    if shutil.which("npm") is None or not (NODE_RUNNER / "node_modules").is_dir():
        pytest.fail("the Node SDK is not installed: run `npm ci --prefix runners/node`")
    result = subprocess.run(
        ["npm", "test", "--silent"], cwd=NODE_RUNNER, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "# fail 0" in result.stdout, result.stdout[-4000:]
