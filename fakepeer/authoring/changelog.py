"""CHANGELOG.md as data: releases, their changes and the fixtures each names.

Why: an SDK author upgrading from a pinned release needs to know which fixtures are new or
changed since (`ryusen-conform changes --since`, `run --since`), and a test needs to hold the
changelog to the corpus. The format is written at the top of CHANGELOG.md; this parser refuses
anything else with the line number, so the file cannot drift into prose the tools misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import atomic

UNRELEASED = "Unreleased"
_RELEASE = re.compile(
    r"^## (?P<package>\d+\.\d+\.\d+) — corpus (?P<corpus>\d+\.\d+), "
    r"protocol (?P<protocol>\d+\.\d+) \((?P<date>\d{4}-\d{2}-\d{2})\)$"
)
_BULLET = re.compile(r"^- \*\*(?P<key>[A-Za-z ]+):\*\* ?(?P<text>.*)$")
_ID = re.compile(r"`([^`]+)`")
KEYS = (
    "Fixtures added",
    "Fixtures changed",
    "Fixtures removed",
    "Level",
    "Rule",
    "SDK must",
    "Protocol",
    "Commit",
)
_LISTS = {"Fixtures added": "added", "Fixtures changed": "changed", "Fixtures removed": "removed"}


class ChangelogError(ValueError):
    """CHANGELOG.md does not follow its own format; the message names the line."""


@dataclass
class Change:
    """One `### ` entry: a line for people and its bullets."""

    title: str
    line: int
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    bullets: dict[str, str] = field(default_factory=dict)

    @property
    def fixtures(self) -> list[str]:
        return [*self.added, *self.changed, *self.removed]


@dataclass
class Release:
    """One `## ` section: Unreleased, or a release with its versions."""

    name: str
    line: int
    corpus: str | None = None
    protocol: str | None = None
    date: str | None = None
    changes: list[Change] = field(default_factory=list)

    @property
    def released(self) -> bool:
        return self.name != UNRELEASED

    def heading(self) -> str:
        if not self.released:
            return UNRELEASED
        return f"{self.name} — corpus {self.corpus}, protocol {self.protocol} ({self.date})"


def parse(text: str) -> list[Release]:
    """The releases of a changelog, newest first, as written."""
    releases: list[Release] = []
    change: Change | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            releases.append(_release(line, number))
            change = None
        elif line.startswith("### "):
            if not releases:
                raise ChangelogError(f"CHANGELOG.md:{number}: a change before any release heading")
            change = Change(line[4:].strip(), number)
            releases[-1].changes.append(change)
        elif line.startswith("- **") and change is not None:
            _bullet(change, line, number)
    _check_order(releases)
    return releases


def _release(line: str, number: int) -> Release:
    if line == f"## {UNRELEASED}":
        return Release(UNRELEASED, number)
    match = _RELEASE.match(line)
    if match is None:
        raise ChangelogError(
            f"CHANGELOG.md:{number}: a release heading is '## Unreleased' or '## X.Y.Z — corpus "
            f"M.N, protocol M.N (YYYY-MM-DD)', got {line!r}"
        )
    return Release(match["package"], number, match["corpus"], match["protocol"], match["date"], [])


def _bullet(change: Change, line: str, number: int) -> None:
    match = _BULLET.match(line)
    if match is None or match["key"] not in KEYS:
        raise ChangelogError(
            f"CHANGELOG.md:{number}: a change's bullet is '- **Key:** text' with Key one of "
            f"{', '.join(KEYS)}; got {line[:80]!r}"
        )
    key, value = match["key"], match["text"].strip()
    if key in change.bullets:
        raise ChangelogError(f"CHANGELOG.md:{number}: {key!r} given twice in one change")
    change.bullets[key] = value
    if key in _LISTS:
        ids = _ID.findall(value)
        if not ids and value != "none":
            raise ChangelogError(
                f"CHANGELOG.md:{number}: {key} lists fixture ids in backticks, or says none"
            )
        getattr(change, _LISTS[key]).extend(ids)


def _check_order(releases: list[Release]) -> None:
    """Unreleased first (if at all), then releases with falling package and corpus versions."""
    for index, release in enumerate(releases):
        if not release.released and index != 0:
            raise ChangelogError(f"CHANGELOG.md:{release.line}: Unreleased comes first")
    dated = [r for r in releases if r.released]
    for newer, older in zip(dated, dated[1:], strict=False):
        if _key(newer.name) <= _key(older.name) or _key(newer.corpus) <= _key(older.corpus):
            raise ChangelogError(
                f"CHANGELOG.md:{newer.line}: releases go newest first; {newer.name} (corpus "
                f"{newer.corpus}) is not newer than {older.name} (corpus {older.corpus})"
            )


def _key(version: str | None) -> tuple[int, ...]:
    return tuple(int(part) for part in (version or "0").split("."))


def read_changelog(path: Path) -> list[Release]:
    """CHANGELOG.md at `path`, parsed; ChangelogError when it is missing or malformed."""
    try:
        text = atomic.read_text(path)  # a FIFO in its place must not hang `changes`
    except OSError as exc:
        raise ChangelogError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse(text)


def since(releases: list[Release], version: str) -> list[Release]:
    """The releases newer than `version` (a package version `0.4.0` or a corpus version
    `3.0`), Unreleased included, newest first; ChangelogError naming the known ones otherwise."""
    for index, release in enumerate(releases):
        if release.released and version in (release.name, release.corpus):
            return releases[:index]
    known = ", ".join(f"{r.name} (corpus {r.corpus})" for r in releases if r.released)
    raise ChangelogError(f"no release {version!r} in CHANGELOG.md; the releases are: {known}")


def touched_since(releases: list[Release], version: str) -> tuple[set[str], set[str]]:
    """(fixtures added or changed, fixtures removed) in the releases after `version`."""
    newer = since(releases, version)
    touched: set[str] = set()
    removed: set[str] = set()
    for release in reversed(newer):  # oldest first: a later removal wins, a later re-add too
        for change in release.changes:
            touched.update(change.added, change.changed)
            removed.difference_update(change.added)
            removed.update(change.removed)
            touched.difference_update(change.removed)
    return touched, removed


def corpus_problems(
    releases: list[Release], recorded: dict[str, str], recorded_version: str, now: dict[str, str]
) -> list[str]:
    """Where CHANGELOG.md and the corpus disagree (empty when they agree).

    `recorded` is the last release's fixture digests (fixtures/corpus-release.txt, version
    `recorded_version`), `now` the corpus's. The released entries, replayed oldest first, must
    produce exactly the recorded fixtures; every fixture added, changed or removed since must
    be named under Unreleased.
    """
    problems: list[str] = []
    dated = [r for r in releases if r.released]
    if not dated or dated[0].corpus != recorded_version:
        newest = dated[0].corpus if dated else None
        problems.append(
            f"the newest release in CHANGELOG.md is corpus {newest}, but "
            f"fixtures/corpus-release.txt records corpus {recorded_version}"
        )
    ids: set[str] = set()
    for release in reversed(dated):
        for change in release.changes:
            ids.update(change.added)
            ids.difference_update(change.removed)
    for ident in sorted(set(recorded) - ids):
        problems.append(f"{ident}: in release {recorded_version} but added by no released entry")
    for ident in sorted(ids - set(recorded)):
        problems.append(
            f"{ident}: added by a released entry but not in release {recorded_version} (an "
            "entry appended at the end of CHANGELOG.md lands in the first release: move it to "
            "the end of ## Unreleased)"
        )
    pending = releases[0] if releases and not releases[0].released else Release(UNRELEASED, 0)
    named = {
        kind: {i for change in pending.changes for i in getattr(change, kind)}
        for kind in ("added", "changed", "removed")
    }
    for ident in sorted(set(now) - set(recorded) - named["added"]):
        problems.append(f"{ident}: added since {recorded_version}; name it under Unreleased")
    for ident in sorted(set(recorded) - set(now) - named["removed"]):
        problems.append(f"{ident}: removed since {recorded_version}; name it under Unreleased")
    for ident in sorted(i for i in now if i in recorded and now[i] != recorded[i]):
        if ident not in named["changed"] | named["added"]:
            problems.append(
                f"{ident}: changed since {recorded_version} (steps, level, capabilities or "
                "protocol version); name it under Unreleased as Fixtures changed"
            )
    for ident in sorted((named["added"] | named["changed"]) - set(now) - named["removed"]):
        problems.append(f"{ident}: named under Unreleased but no fixture has this id")
    return problems
