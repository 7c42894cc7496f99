"""docs/host-walkthrough.md stays true (issue 22, item 10): its Python blocks, joined in order,
are a host the bench passes on the fixtures the page names, and the README points at the page
from "What an SDK author implements"."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.support.helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "host-walkthrough.md"


def test_the_walkthrough_host_passes_its_fixtures(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4, "frames, handshake, reset/invoke/trace, loop"
    host = tmp_path / "host.py"
    host.write_text("\n\n".join(blocks), encoding="utf-8")
    assert 'ryusen-conform run --sdk "python3 host.py" -k values.bytes-empty' in text
    result = run_cli(
        "run",
        *("--sdk", f"{sys.executable} {host}"),
        *("-k", "values.bytes-empty or values.str-unicode-roundtrip"),
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.rstrip().splitlines()[-1] == "2 passed, 0 failed"
    assert "register frame:" not in result.stdout  # the handshake is schema-valid
    assert len(text.splitlines()) < 160  # short enough to read in five minutes


def test_the_readme_points_at_the_walkthrough_where_a_host_is_described() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What an SDK author implements", 1)[1].split("\n## ", 1)[0]
    assert "(docs/host-walkthrough.md)" in section
