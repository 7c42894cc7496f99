"""The corpus version: which release of the fixtures a run used, and whether it was changed since.

RFD 2: "Fixtures change with the protocol, not per SDK." An SDK author pins a corpus release
(CHANGELOG.md) and must be able to tell, from every run and report, whether the fixtures were
exactly that release. `fixtures/corpus-release.txt` records the last release: its version and
one digest per fixture. A corpus equal to it is that version (`3.0`); any other is the release
plus `+dev`, with a fingerprint of its content either way.

Bump rule (docs/fixtures.md "Corpus versions"): MAJOR.MINOR. A release raises MAJOR when it
changes or removes a fixture an SDK already ran or raises a level; otherwise (fixtures only
added, levels only lowered) it raises MINOR.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import atomic

#: The record of the last release, inside the fixtures folder (not JSON, so never loaded as one).
RELEASE_FILE = "corpus-release.txt"
#: Members that never change a verdict: a digest ignores them (title, notes, rule text).
_IGNORED = ("title", "notes", "rule")


def fixture_digest(document: Mapping) -> str:
    """A fixture's content as far as a verdict depends on it (steps, level, capabilities,
    version, scenario), 16 hex digits; a new title, note or quote does not change it."""
    core = {key: value for key, value in document.items() if key not in _IGNORED}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def corpus_digests(fixtures_dir: Path) -> dict[str, str]:
    """Fixture id -> digest for every fixture file under `fixtures_dir` (unreadable files are
    left to the loader, which reports them)."""
    digests: dict[str, str] = {}
    known = _read_memo()
    seen: dict[str, list[str]] = {}
    for path in sorted(fixtures_dir.rglob("*.json"), key=str):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        key = hashlib.sha256(data).hexdigest()[:32]
        entry = known.get(key)
        if entry is None:
            try:
                document = json.loads(data.decode("utf-8"))
            except ValueError:
                continue
            if not (isinstance(document, dict) and isinstance(document.get("id"), str)):
                continue
            entry = [document["id"], fixture_digest(document)]
        seen[key] = entry
        digests[entry[0]] = entry[1]
    if not seen.keys() <= known.keys():  # a new or edited file; other corpora's entries stay
        _write_memo(seen if len(known) + len(seen) > _MEMO_ENTRIES else known | seen)
    return digests


#: (id, digest) by the sha256 of a fixture file's bytes: reading 500 files is cheap, parsing and
#: re-encoding them is not (`run -k ONE` prints the corpus version).
_MEMO = "corpus-digests-1.json"
_MEMO_ENTRIES = 5000


def _read_memo() -> dict[str, list[str]]:
    from fakepeer.cases import cache

    root = cache.cache_root()
    if root is None or not cache.usable(root):  # another user's file could lie about a digest
        return {}
    try:
        memo = json.loads((root / _MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(memo, dict):
        return {}
    return {
        key: value
        for key, value in memo.items()
        if isinstance(value, list)
        and len(value) == 2
        and all(isinstance(part, str) for part in value)
    }


def _write_memo(memo: dict[str, list[str]]) -> None:
    """Best effort, atomic: a cache that cannot be written costs speed, never a result."""
    import os
    import tempfile

    from fakepeer.cases import cache

    root = cache.cache_root()
    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=root, prefix=".tmp-")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(memo, stream, separators=(",", ":"))
        os.replace(temporary, root / _MEMO)
    except OSError:
        return


@dataclass(frozen=True)
class Release:
    """A corpus release as recorded: its version and each fixture's digest."""

    version: str
    digests: dict[str, str]

    def text(self) -> str:
        lines = [
            "# The last corpus release (CHANGELOG.md): version, then one line per fixture,",
            "# `<id> <digest>`. Written by scripts/release.py; never edited by hand.",
            f"corpus {self.version}",
            *(f"{ident} {digest}" for ident, digest in sorted(self.digests.items())),
        ]
        return "\n".join(lines) + "\n"


def read_release(fixtures_dir: Path) -> Release | None:
    """The recorded last release, or None when the folder has none (a corpus of one's own)."""
    path = fixtures_dir / RELEASE_FILE
    try:
        text = atomic.read_text(path)  # a FIFO in its place must not hang every run
    except OSError:
        return None
    version, digests = None, {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("corpus "):
            version = line.split(None, 1)[1].strip()
            continue
        ident, _, digest = line.partition(" ")
        digests[ident] = digest.strip()
    return None if version is None else Release(version, digests)


@dataclass(frozen=True)
class CorpusVersion:
    """What a run reports about its corpus."""

    #: `3.0` when the fixtures are exactly release 3.0, `3.0+dev` otherwise, `unreleased` when
    #: the folder records no release.
    version: str
    #: sha256 over every fixture's id and digest, 16 hex digits: two runs on the same fixtures
    #: have the same fingerprint.
    fingerprint: str
    count: int
    release: str | None = None
    added: tuple[str, ...] = field(default=())
    changed: tuple[str, ...] = field(default=())
    removed: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """`corpus 3.0+dev (523 fixtures, 2 added, 1 changed since 3.0; sha256:…)`."""
        delta = [
            f"{len(names)} {word}"
            for names, word in ((self.added, "added"), (self.changed, "changed"))
            if names
        ]
        if self.removed:
            delta.append(f"{len(self.removed)} removed")
        since = f", {', '.join(delta)} since {self.release}" if delta else ""
        return f"corpus {self.version} ({self.count} fixtures{since}; sha256:{self.fingerprint})"

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "release": self.release,
            "fingerprint": f"sha256:{self.fingerprint}",
            "fixtures": self.count,
        }


def corpus_version(fixtures_dir: Path) -> CorpusVersion:
    """The version of the corpus in `fixtures_dir`, against its recorded release."""
    return compare(corpus_digests(fixtures_dir), read_release(fixtures_dir))


def compare(digests: Mapping[str, str], release: Release | None) -> CorpusVersion:
    fingerprint = _fingerprint(digests.items())
    if release is None:
        return CorpusVersion("unreleased", fingerprint, len(digests))
    old = release.digests
    added = tuple(sorted(set(digests) - set(old)))
    removed = tuple(sorted(set(old) - set(digests)))
    changed = tuple(sorted(i for i in digests if i in old and old[i] != digests[i]))
    same = not (added or removed or changed)
    version = release.version if same else f"{release.version}+dev"
    return CorpusVersion(
        version, fingerprint, len(digests), release.version, added, changed, removed
    )


def _fingerprint(items: Iterable[tuple[str, str]]) -> str:
    text = "\n".join(f"{ident} {digest}" for ident, digest in sorted(items))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
