"""The README stays true: it embeds the current protocol text and its test command is CI's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_readme_embeds_current_protocol_and_fixture_format() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sync_readme.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    assert commands[0].endswith("ryusen-conform run")
    assert commands[1].endswith("python3 -m pytest -n auto")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci


# ----------------------------------------------------------------------------- issue 22 (10)


def _sync_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "sync_readme", ROOT / "scripts" / "sync_readme.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_in_page_link_of_the_readme_lands_on_a_heading() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    anchors = {anchor for _, _, anchor in _sync_module().headings(readme)}
    links = set(re.findall(r"\]\(#([^)]+)\)", readme))
    assert links, "the README has a linked contents list"
    assert sorted(links - anchors) == []


def test_the_readme_has_a_contents_list_and_one_heading_per_section() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = _sync_module().headings(readme)
    contents = readme.split("<!-- contents:begin -->", 1)[1].split("<!-- contents:end -->", 1)[0]
    for level, _, anchor in found:
        if level == 2:
            assert f"(#{anchor})" in contents
    pairs = zip(found, found[1:], strict=False)
    doubled = [a[1] for a, b in pairs if a[1].lower() == b[1].lower()]
    assert doubled == [], "a heading directly under a heading of the same text"
    wrappers = [text for level, text, _ in found if level == 2]
    assert "The protocol" not in wrappers and "The conformance host contract" not in wrappers


def test_the_host_duties_come_where_the_sdk_author_section_points() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    author = readme.split("## What an SDK author implements", 1)[1].split("\n## ", 1)[0]
    assert "(#12-the-conformance-host-contract)" in author
    assert "(#13-the-conformance-registry)" in author
    assert "docs/host-contract.md" in readme.split("<!-- contents:begin -->", 1)[0]
    assert readme.index("### 12. The conformance host contract") < readme.index("### 1. Framing")
