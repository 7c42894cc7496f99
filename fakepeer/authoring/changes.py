"""`ryusen-conform changes [--since VERSION]`: what changed for an SDK author, from CHANGELOG.md.

Why: an author pinned to a release upgrades by reading what each later release asks of an SDK
(fixtures added, changed, removed, their level, the rule, what to do), then runs only those
fixtures with `run --since VERSION`. Both read the same data (`authoring/changelog.py`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from fakepeer.authoring.changelog import (
    ChangelogError,
    Release,
    read_changelog,
    since,
    touched_since,
)
from fakepeer.cases.corpus_version import corpus_version
from fakepeer.cases.root import active_root

_SHOWN = ("Level", "Rule", "SDK must", "Protocol")


def releases_since(version: str | None) -> list[Release]:
    """The active root's releases after `version` (all of them when None)."""
    releases = read_changelog(active_root().path / "CHANGELOG.md")
    return releases if version is None else since(releases, version)


def fixtures_since(version: str) -> tuple[set[str], set[str]]:
    """`run --since`: (ids added or changed after `version`, ids removed after it)."""
    return touched_since(read_changelog(active_root().path / "CHANGELOG.md"), version)


def render(releases: list[Release], current: str | None = None) -> str:
    """The releases as text for people, newest first, with a closing count line."""
    lines: list[str] = []
    counts = {"added": set(), "changed": set(), "removed": set()}
    for release in releases:
        heading = release.heading()
        if not release.released and current:
            heading += f" (today's corpus: {current})"
        lines.append(heading)
        if not release.changes:
            lines.append("  (no changes)")
        for change in release.changes:
            lines.append(f"  {change.title}")
            for kind in ("added", "changed", "removed"):
                ids = getattr(change, kind)
                counts[kind].update(ids)
                if ids:
                    lines.append(f"    {kind} ({len(ids)}): {', '.join(ids)}")
            for key in _SHOWN:
                if key in change.bullets:
                    lines.append(f"    {key.lower()}: {change.bullets[key]}")
        lines.append("")
    lines.append(
        f"{len(counts['added'])} fixture(s) added, {len(counts['changed'])} changed, "
        f"{len(counts['removed'])} removed in {len(releases)} release(s)"
    )
    return "\n".join(lines) + "\n"


def changes_command(
    since_version: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only what changed after this release: a package version (0.4.0) or a corpus "
            "version (3.0), as CHANGELOG.md names them.",
            metavar="VERSION",
        ),
    ] = None,
) -> None:
    """Print what changed for an SDK author, release by release, from CHANGELOG.md."""
    try:
        releases = releases_since(since_version)
    except ChangelogError as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    current = corpus_version(active_root().fixtures).version
    typer.echo(render(releases, current), nl=False)


def register_commands(app: typer.Typer) -> None:
    """Add the top-level `changes` command to the main CLI."""
    app.command("changes")(changes_command)
