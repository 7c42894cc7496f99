"""Embed the protocol document, the host contract and the fixture format verbatim in README.md.

The README must be enough on its own for an SDK author, yet the protocol has exactly one text
(docs/protocol.md, with §12-§13 in docs/host-contract.md). So the README carries a copy between
markers, refreshed by this script and checked by tests/test_readme.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EMBEDDED = {
    "protocol": ROOT / "docs" / "protocol.md",
    "host-contract": ROOT / "docs" / "host-contract.md",
    "fixtures": ROOT / "docs" / "fixtures.md",
}


def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- embed:{name}:begin -->", f"<!-- embed:{name}:end -->")


CONTENTS = ("<!-- contents:begin -->", "<!-- contents:end -->")


def slug(heading: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading: lowercased, punctuation dropped, spaces to hyphens, and a
    `-N` suffix for the N-th repeat."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
    count = seen.get(text, 0)
    seen[text] = count + 1
    return text if count == 0 else f"{text}-{count}"


def headings(readme: str) -> list[tuple[int, str, str]]:
    """(level, text, anchor) of every heading outside code fences, in order."""
    found, seen, fenced = [], {}, False
    for line in readme.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"^(#{1,6}) (.*)$", line)
        if match:
            found.append((len(match[1]), match[2], slug(match[2], seen)))
    return found


def contents(readme: str) -> str:
    """The linked contents list: every `##` section and the `###` sections under it."""
    lines = []
    for level, text, anchor in headings(readme):
        if level in (2, 3):
            indent = "  " * (level - 2)
            lines.append(f"{indent}- [{text.replace('`', '')}](#{anchor})")
    return "**Contents**\n\n" + "\n".join(lines)


def render(readme: str) -> str:
    """Return the README text with every embedded document and the contents list refreshed."""
    readme = _embed(readme)
    begin, end = CONTENTS
    head, sep, rest = readme.partition(begin)
    if not sep:
        raise SystemExit(f"README.md: marker {begin} not found")
    _, sep, tail = rest.partition(end)
    if not sep:
        raise SystemExit(f"README.md: marker {end} not found")
    return f"{head}{begin}\n{contents(readme)}\n{end}{tail}"


def _embed(readme: str) -> str:
    """The README text with every embedded document refreshed."""
    for name, path in EMBEDDED.items():
        begin, end = _markers(name)
        head, sep, rest = readme.partition(begin)
        if not sep:
            raise SystemExit(f"README.md: marker {begin} not found")
        _, sep, tail = rest.partition(end)
        if not sep:
            raise SystemExit(f"README.md: marker {end} not found")
        body = path.read_text(encoding="utf-8")
        readme = f"{head}{begin}\n{_demote(body)}\n{end}{tail}"
    return readme


def _demote(markdown: str) -> str:
    """Push every heading down one level so the embedded document nests under a README section."""
    out = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def main() -> int:
    readme_path = ROOT / "README.md"
    current = readme_path.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in sys.argv:
        if fresh != current:
            print("README.md is stale: run python3 scripts/sync_readme.py", file=sys.stderr)
            return 1
        return 0
    readme_path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
