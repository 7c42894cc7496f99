"""Which cases `run` plays: the fixture files it reads (only those the choice can select), the
ids --ids-from, --last-failed and --since restrict it to, then -k, --category, --shard and the
derived variants.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from fakepeer.cases import default_fixture_dir, fixture_files, load_fixtures, select
from fakepeer.cases.loader import RECORDED_SUFFIX
from fakepeer.cases.root import active_root
from fakepeer.cases.variants import with_variants
from fakepeer.cli.options import UsageProblem
from fakepeer.suite import rerun

if TYPE_CHECKING:
    from rich.console import Console


class Choice(NamedTuple):
    """What `run` selects by: listed ids, changed fixtures, categories, -k and the shard."""

    only: set[str] | None
    ids_from: Path | None
    touched: set[str] | None
    categories: list[str]
    expressions: list
    shard: object


def load_selection(
    console: Console,
    fixtures: list[Path],
    no_default: bool,
    choice: Choice,
    chosen_variants: tuple[str, ...],
) -> tuple[list, list, set[str]]:
    """Load only the fixture files the choice can select; (selected cases, the selection
    before sharding, every fixture id found)."""
    files = _fixture_paths(fixtures, not no_default)
    _note_unused_fixtures(console, fixtures, no_default)
    found = fixture_files(files)
    named = {Path(os.path.abspath(path)) for path in fixtures}
    drafts = [  # a `fixtures record` draft beside the fixtures: not one until reviewed
        path
        for path in found
        if path.name.endswith(RECORDED_SUFFIX) and Path(os.path.abspath(path)) not in named
    ]
    if drafts:
        console.print(
            f"note: {len(drafts)} recorded draft(s) not run ({drafts[0]}"
            f"{' and more' if len(drafts) > 1 else ''}): review each expect, then save it as "
            "<id>.json",
            markup=False,
            highlight=False,
        )
    all_ids = {path.stem for path in found if path not in drafts}
    if choice.ids_from is not None and choice.only is not None:
        unknown = sorted(i for i in choice.only if i.partition("@")[0] not in all_ids)
        if unknown:
            raise UsageProblem(
                f"--ids-from {choice.ids_from}: {unknown[0]} is no fixture ({len(unknown)} unknown)"
            )

    only, touched, categories = choice.only, choice.touched, choice.categories
    wanted_ids = None if only is None else {ident.partition("@")[0] for ident in only}

    def chosen(path: Path) -> bool:  # id and category come from the path (the loader checks)
        if path in drafts:
            return False
        if wanted_ids is not None and path.stem not in wanted_ids:
            return False
        if touched is not None and path.stem not in touched:
            return False
        if categories and path.parent.name not in categories:
            return False
        return all(rule.matches(path.stem, path.parent.name) for rule in choice.expressions)

    corpus = load_fixtures(files, only=chosen)
    keywords = choice.expressions
    unsharded = select(corpus, keywords=keywords, categories=categories)
    selected = select(corpus, keywords=keywords, categories=categories, shard=choice.shard)
    selected = with_variants(selected, chosen_variants, sample_from=unsharded)
    if only is not None:
        selected = [case for case in selected if rerun.wanted(case.id, only)]
    return selected, unsharded, all_ids


def _note_unused_fixtures(console: Console, extra: list[Path], no_default: bool) -> None:
    """Outside a checkout, a `./fixtures` folder (where `fixtures new` writes there) is not the
    active root's: say so rather than run without it silently."""
    root = active_root()
    own = Path.cwd() / "fixtures"
    if no_default or root.source == "checkout" or not own.is_dir():
        return
    if own.resolve() == root.fixtures.resolve():
        return
    for path in map(Path, map(os.path.abspath, extra)):
        if path == own or own in path.parents or path in own.parents:
            return
    console.print(
        f"note: ./fixtures is not part of this run (the corpus is {root.fixtures}); add your own "
        "fixtures with --fixtures fixtures",
        markup=False,
        highlight=False,
    )


def _fixture_paths(extra: list[Path], include_default: bool) -> list[Path]:
    """The files and folders `run` loads fixtures from."""
    paths = list(extra)
    if not include_default:  # the root is not consulted (nor announced) when it is not used
        if not paths:
            raise UsageProblem("no fixtures to load: --no-default-fixtures and no --fixtures given")
        return paths
    default = default_fixture_dir()
    if default.is_dir():
        paths.insert(0, default)
    if not paths:
        raise UsageProblem(f"no fixtures to load: {default} does not exist and no --fixtures given")
    return paths


def only_ids(ids_from: Path | None, last_failed: bool) -> set[str] | None:
    """The ids --ids-from and --last-failed restrict the run to (None: no restriction)."""
    only: set[str] | None = None
    try:
        if ids_from is not None:
            only = rerun.read_ids(ids_from)
        if last_failed:
            failed = rerun.read_last_failed(default_fixture_dir())
            if not failed:
                print("--last-failed: no failures recorded here; running the whole selection")
            else:
                only = failed if only is None else only & failed
    except rerun.RerunError as exc:
        raise UsageProblem(str(exc)) from None
    return only


def changed_since(version: str, console: Console) -> set[str]:
    """`run --since`: the fixture ids CHANGELOG.md names as added or changed after `version`."""
    from fakepeer.authoring.changelog import ChangelogError
    from fakepeer.authoring.changes import fixtures_since

    try:
        touched, removed = fixtures_since(version)
    except ChangelogError as exc:
        raise UsageProblem(f"--since: {exc}") from None
    gone = f"; {len(removed)} removed since, not run" if removed else ""
    console.print(
        f"--since {version}: {len(touched)} fixture(s) added or changed since{gone}",
        markup=False,
        highlight=False,
    )
    return touched
