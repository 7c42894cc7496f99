#!/usr/bin/env python3
"""Cut a release: `## Unreleased` becomes a dated version heading, the corpus is recorded.

Why: an SDK author pins a release (CHANGELOG.md); the release heading, the recorded corpus
(fixtures/corpus-release.txt, which `run` compares every corpus with) and the package version
must move together, or `--version` and `changes --since` would describe a release that is not
what was shipped. One script does the three, checks first, and writes nothing when a check fails.

    python scripts/release.py PACKAGE_VERSION [--corpus M.N] [--date YYYY-MM-DD] [--root DIR]

PACKAGE_VERSION is `X.Y.Z` and must be newer than the newest release. The corpus version follows
the bump rule of docs/fixtures.md ("Corpus versions"): MAJOR when a fixture was changed or removed
since the last release, MINOR when fixtures were only added; `--corpus` overrides it (a release
whose only changes lowered levels is MINOR, which the digests alone cannot tell). The protocol
version is the bench's (fakepeer/protocol/version.py). A new empty `## Unreleased` is left on top.
Never run it on main for a trial: use `--root` on a copy.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fakepeer.authoring.changelog import ChangelogError, parse  # noqa: E402
from fakepeer.cases.corpus_version import (  # noqa: E402
    RELEASE_FILE,
    Release,
    compare,
    corpus_digests,
    read_release,
)
from fakepeer.protocol.version import PROTOCOL_VERSION  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
_CORPUS = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)")
_PYPROJECT_VERSION = re.compile(r'^version = "[^"]*"$', re.MULTILINE)
_INIT_VERSION = re.compile(r'^__version__ = "[^"]*"$', re.MULTILINE)


class ReleaseError(Exception):
    """A check failed; nothing was written."""


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def next_corpus(old: str, added: bool, changed_or_removed: bool) -> str:
    """The bump rule: MAJOR when a fixture an SDK ran changed or went, else MINOR."""
    major, minor = _key(old)
    if changed_or_removed:
        return f"{major + 1}.0"
    if added:
        return f"{major}.{minor + 1}"
    raise ReleaseError(f"the fixtures are exactly corpus {old}; give --corpus for a new version")


def cut(root: Path, package: str, corpus: str | None, date: str) -> str:
    """Release the tree at `root`; returns the new heading. ReleaseError before any write."""
    if not _SEMVER.fullmatch(package):
        raise ReleaseError(f"package version must be X.Y.Z, got {package!r}")
    if corpus is not None and not _CORPUS.fullmatch(corpus):
        raise ReleaseError(f"corpus version must be M.N, got {corpus!r}")
    changelog_path = root / "CHANGELOG.md"
    fixtures = root / "fixtures"
    text = changelog_path.read_text(encoding="utf-8")
    try:
        releases = parse(text)
    except ChangelogError as exc:
        raise ReleaseError(str(exc)) from None
    if not releases or releases[0].released:
        raise ReleaseError("CHANGELOG.md has no '## Unreleased' section to release")
    if not releases[0].changes:
        raise ReleaseError("'## Unreleased' has no changes; nothing to release")
    newest = next((r for r in releases if r.released), None)
    recorded = read_release(fixtures)
    digests = corpus_digests(fixtures)
    state = compare(digests, recorded)
    if corpus is None:
        if recorded is None:
            raise ReleaseError(f"{fixtures / RELEASE_FILE} records no release; give --corpus")
        corpus = next_corpus(
            recorded.version, bool(state.added), bool(state.changed or state.removed)
        )
    if newest is not None:
        if _key(package) <= _key(newest.name):
            raise ReleaseError(f"package {package} is not newer than the release {newest.name}")
        if _key(corpus) <= _key(newest.corpus or "0.0"):
            raise ReleaseError(f"corpus {corpus} is not newer than corpus {newest.corpus}")
    heading = f"{package} — corpus {corpus}, protocol {PROTOCOL_VERSION} ({date})"
    new_text = text.replace("\n## Unreleased\n", f"\n## Unreleased\n\n## {heading}\n", 1)
    try:
        parse(new_text)
    except ChangelogError as exc:  # pragma: no cover - the checks above should prevent it
        raise ReleaseError(str(exc)) from None
    pyproject = root / "pyproject.toml"
    init = root / "fakepeer" / "__init__.py"
    py_text, init_text = pyproject.read_text(encoding="utf-8"), init.read_text(encoding="utf-8")
    if not _PYPROJECT_VERSION.search(py_text) or not _INIT_VERSION.search(init_text):
        raise ReleaseError("cannot find the version line in pyproject.toml or fakepeer/__init__.py")
    changelog_path.write_text(new_text, encoding="utf-8")
    (fixtures / RELEASE_FILE).write_text(Release(corpus, digests).text(), encoding="utf-8")
    pyproject.write_text(
        _PYPROJECT_VERSION.sub(f'version = "{package}"', py_text, count=1), encoding="utf-8"
    )
    init.write_text(
        _INIT_VERSION.sub(f'__version__ = "{package}"', init_text, count=1), encoding="utf-8"
    )
    return heading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="the new package version, X.Y.Z")
    parser.add_argument("--corpus", help="the new corpus version M.N (default: the bump rule)")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="YYYY-MM-DD")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to release")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
        print(f"release: --date must be YYYY-MM-DD, got {args.date!r}", file=sys.stderr)
        return 2
    try:
        heading = cut(args.root, args.package, args.corpus, args.date)
    except (ReleaseError, OSError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    print(f"released: ## {heading}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
