"""CHANGELOG.md stays true to the corpus (docs/fixtures.md "Corpus versions"): its format
parses, the released entries replay to the last release's fixtures, and every fixture added,
changed or removed since that release is named under Unreleased."""

from __future__ import annotations

import pytest

from fakepeer.authoring.changelog import (
    ChangelogError,
    corpus_problems,
    parse,
    read_changelog,
    since,
    touched_since,
)
from fakepeer.cases.corpus_version import corpus_digests, read_release
from tests.support.helpers import REPO


def _state() -> tuple[list, dict, str, dict]:
    releases = read_changelog(REPO / "CHANGELOG.md")
    release = read_release(REPO / "fixtures")
    assert release is not None, "fixtures/corpus-release.txt records the last release"
    return releases, release.digests, release.version, corpus_digests(REPO / "fixtures")


def test_the_changelog_names_every_fixture_change_since_the_last_release() -> None:
    releases, recorded, version, now = _state()
    problems = corpus_problems(releases, recorded, version, now)
    assert not problems, "\n".join(problems[:40])


def test_a_fixture_added_without_an_entry_is_reported() -> None:
    releases, recorded, version, now = _state()
    problems = corpus_problems(releases, recorded, version, {**now, "values.brand-new": "0" * 16})
    assert problems == [f"values.brand-new: added since {version}; name it under Unreleased"]


def test_a_changed_or_removed_fixture_without_an_entry_is_reported() -> None:
    releases, recorded, version, now = _state()
    quiet = next(i for i in sorted(recorded) if i in now and now[i] == recorded[i])
    changed = corpus_problems(releases, recorded, version, {**now, quiet: "f" * 16})
    assert len(changed) == 1 and changed[0].startswith(f"{quiet}: changed since {version}")
    gone = {k: v for k, v in now.items() if k != quiet}
    assert corpus_problems(releases, recorded, version, gone) == [
        f"{quiet}: removed since {version}; name it under Unreleased"
    ]


def test_released_entries_replay_to_the_recorded_release() -> None:
    releases, recorded, version, now = _state()
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    head, _, released = text.partition("\n## 0.4.0 ")
    released = released.replace("`values.str-leading-nul-roundtrip`, ", "", 1)
    broken = parse(f"{head}\n## 0.4.0 {released}")
    problems = corpus_problems(broken, recorded, version, now)
    assert any(p.startswith("values.str-leading-nul-roundtrip: in release") for p in problems)


def test_since_and_touched_since() -> None:
    releases = read_changelog(REPO / "CHANGELOG.md")
    assert [r.name for r in since(releases, "0.3.0")][-1] == "0.4.0"
    assert since(releases, "3.0") == since(releases, "0.4.0")
    touched, _ = touched_since(releases, "2.1")
    assert "values.str-leading-nul-roundtrip" in touched
    assert "lifecycle.saga-completes" not in touched  # untouched since 2.1
    with pytest.raises(ChangelogError, match="no release '9.9'"):
        since(releases, "9.9")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("## 1.0 — corpus 1, protocol 1.0 (2026-01-01)\n", "release heading"),
        ("## Unreleased\n\n### x\n- **Fixture added:** `a`\n", "bullet"),
        ("## Unreleased\n\n### x\n- **Fixtures added:** a, b\n", "backticks"),
        ("## 0.1.0 — corpus 1.0, protocol 1.0 (2026-01-01)\n## Unreleased\n", "comes first"),
        (
            "## 0.1.0 — corpus 1.0, protocol 1.0 (2026-01-01)\n"
            "## 0.2.0 — corpus 2.0, protocol 1.0 (2026-01-02)\n",
            "newest first",
        ),
    ],
)
def test_a_malformed_changelog_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(ChangelogError, match=message):
        parse(text)
