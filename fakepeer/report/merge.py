"""Merging shard reports (`ryusen-conform merge`): one report per SDK label, cases unioned.

Shards of a multi-SDK run each hold every SDK with their share of the cases; the merge keeps the
SDKs in the order they first appear, so the tally columns stay in `--sdk` order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import __version__
from fakepeer.cases.selection import Shard
from fakepeer.report.catalog import CaseInfo, catalog_from_document
from fakepeer.report.document import ReportError, read_document, run_from_document, selection_of
from fakepeer.report.fleet import FLEET_SUFFIX
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun


@dataclass
class Merged:
    """The combined run, and the fixture titles and rules the shard reports recorded."""

    run: RunResult
    catalog: dict[str, CaseInfo] = field(default_factory=dict)
    #: The selection all the reports were shards of (None when mixed).
    selection: dict | None = None
    #: Each report's recorded exit status: the merge never exits greener than the worst.
    shard_statuses: dict[str, int] = field(default_factory=dict)
    #: The corpus version every report recorded (None when unknown or they differ).
    corpus: dict | None = None
    #: Selected cases no report holds (only with --allow-partial): the merge is then no verdict
    #: on them, so it cannot be green; each is in the merged run as a case not run.
    missing: int = 0


#: The reason of a selected case no merged report holds (`merge --allow-partial`).
MISSING_REASON = (
    "not run: no merged report holds this selected case (merge --allow-partial), so there is "
    "no verdict on it; the selection records only how many cases it has, not which"
)


def merge_documents(
    paths: Sequence[Path], *, allow_partial: bool = False, allow_mixed: bool = False
) -> Merged:
    """Combine shard reports, keeping the fixture catalog too (for the HTML report).

    Every input is checked against the report schema (which requires its `selection`). The
    reports must agree on the options that decide a verdict (`--strict`, `--lenient`, the case
    timeout, the SDKs) and, unless told otherwise, be of one selection (`allow_mixed`: then each
    selection is checked on its own) and together hold exactly all of it (`allow_partial`):
    every shard 1..N once, and for every SDK case ids that hash to the selection. A case held
    twice, in one report or two, is an error. An interrupted shard makes the merged run
    interrupted.
    """
    if not paths:
        raise ReportError("merge needs at least one report")
    documents = [(path, read_document(path)) for path in paths]
    _check_versions(documents)
    _check_corpora(documents)
    _check_options(documents)
    groups = _selection_groups(documents, allow_mixed)
    merged: dict[str, SdkRun] = {}
    catalog: dict[str, CaseInfo] = {}
    list_problems: list[str] = []
    statuses = {str(path): int(document.get("exit_status", 0)) for path, document in documents}
    lacking: dict[str, int] = {}
    for group in groups:
        if not allow_partial:
            _check_shards(group)
        runs = _merge_group(group, catalog, list_problems)
        selection = group[0][1]["selection"]
        for sdk in runs.values():
            if not sdk.label.endswith(FLEET_SUFFIX):  # a pair's cases derive from the selection
                lacking[sdk.label] = lacking.get(sdk.label, 0) + _check_complete(
                    sdk, selection, allow_partial
                )
            target = merged.get(sdk.label)
            if target is None:
                merged[sdk.label] = sdk
            else:
                _absorb(target, sdk, group[0][0])
    first = documents[0][1]
    for sdk in merged.values():
        sdk.results += _placeholders(lacking.get(sdk.label, 0))
        sdk.results.sort(key=lambda case: case.id)
    missing = max(lacking.values(), default=0)
    run = RunResult(
        sdks=list(merged.values()),
        strict=bool(first["strict"]),
        lenient=bool(first["lenient"]),
        interrupted=any(document.get("interrupted") for _, document in documents),
        list_problems=list_problems,
    )
    if len(groups) == 1:
        selection = first["selection"]
    else:  # the union of complete selections is itself a selection
        selection = selection_of(case.id for sdk in run.sdks[:1] for case in sdk.results)
    corpus = first.get("corpus")  # one for all: _check_corpora
    return Merged(run, catalog, selection, shard_statuses=statuses, corpus=corpus, missing=missing)


def _placeholders(count: int) -> list[CaseResult]:
    """One case not run per selected case no report holds: every report format then counts
    them as errors and the merged document's exit status is never 0 (its ids are no fixture
    ids: the reports record the selection's size and hash, never which ids are missing)."""
    return [
        CaseResult(
            id=f"<missing {index} of {count}>",
            category="missing",
            level="required",
            outcome=Outcome.ERROR,
            raw_outcome=Outcome.ERROR,
            reason=MISSING_REASON,
            not_run=True,
        )
        for index in range(1, count + 1)
    ]


def _check_corpora(documents: list[tuple[Path, dict]]) -> None:
    """Shards of one run loaded one corpus: the same fixture ids with other content (another
    fingerprint) or another recorded version are another run, so their merge is no verdict."""
    first_path, first = documents[0]
    for path, document in documents[1:]:
        if document.get("corpus") != first.get("corpus"):
            raise ReportError(
                f"{path} and {first_path} were run on different fixture corpora "
                f"({_corpus_text(document.get('corpus'))} and "
                f"{_corpus_text(first.get('corpus'))}): shards of one run load one corpus; "
                "re-run the odd one"
            )


def _corpus_text(corpus: object) -> str:
    if not isinstance(corpus, dict):
        return "no default corpus"
    return f"corpus {corpus.get('version')}, {corpus.get('fingerprint')}"


def _check_versions(documents: list[tuple[Path, dict]]) -> None:
    """Shards and merge are one version of the bench: another version may judge a case
    differently, so a merge across versions is no verdict of either."""
    for path, document in documents:
        version = document["tool"]["version"]
        if version != __version__:
            raise ReportError(
                f"{path} was written by ryusen-conform {version}, this is {__version__}: "
                "run the shards and the merge with one version of the bench"
            )


def _merge_group(
    group: list[tuple[Path, dict]], catalog: dict[str, CaseInfo], list_problems: list[str]
) -> dict:
    """The reports of one selection, one SdkRun per label (cases unioned, duplicates refused);
    the catalog and every shard's known-failure list problems are gathered on the way."""
    merged: dict[str, SdkRun] = {}
    for path, document in group:
        catalog.update(catalog_from_document(document))
        run = run_from_document(document)
        list_problems += [p for p in run.list_problems if p not in list_problems]
        for sdk in run.sdks:
            _check_unique(sdk, path)
            target = merged.get(sdk.label)
            if target is None:
                merged[sdk.label] = sdk
            else:
                _absorb(target, sdk, path)
    return merged


def _selection_groups(
    documents: list[tuple[Path, dict]], allow_mixed: bool
) -> list[list[tuple[Path, dict]]]:
    """The reports by the selection they recorded (one group unless `allow_mixed`)."""
    groups: dict[str, list[tuple[Path, dict]]] = {}
    for path, document in documents:
        groups.setdefault(document["selection"]["sha256"], []).append((path, document))
    if len(groups) > 1 and not allow_mixed:
        (first_path, first), (path, other) = (group[0] for group in list(groups.values())[:2])
        raise ReportError(
            f"{path} and {first_path} are runs of different fixture selections "
            f"({other['selection']['count']} and {first['selection']['count']} cases); pass "
            "--allow-mixed to merge them anyway"
        )
    return list(groups.values())


#: The report members that decide a verdict: shards that differ in one are not one run.
_OPTIONS = (("strict", "--strict"), ("lenient", "--lenient"), ("case_timeout", "--timeout"))


def _check_options(documents: list[tuple[Path, dict]]) -> None:
    """ReportError unless every report was run with the same verdict options and SDKs."""
    first_path, first = documents[0]
    for path, document in documents[1:]:
        for member, option in _OPTIONS:
            if document.get(member) != first.get(member):
                raise ReportError(
                    f"{path} and {first_path} were run with different {option} "
                    f"({document.get(member)} and {first.get(member)}); shards of one run "
                    "share their options: re-run the odd one"
                )
        labels = [sdk["label"] for sdk in document["sdks"]]
        first_labels = [sdk["label"] for sdk in first["sdks"]]
        if sorted(labels) != sorted(first_labels):
            raise ReportError(
                f"{path} and {first_path} ran different SDKs ({', '.join(labels) or 'none'} "
                f"and {', '.join(first_labels) or 'none'})"
            )


def _check_unique(sdk: SdkRun, path: Path) -> None:
    seen: set[str] = set()
    for case in sdk.results:
        if case.id in seen:
            raise ReportError(f"{path}: {sdk.label}: case {case.id} is in the report twice")
        seen.add(case.id)


def _check_complete(sdk: SdkRun, selection: dict, allow_partial: bool) -> int:
    """How many selected cases the merged reports lack for `sdk`; ReportError when they are not
    exactly the selection (a case of another selection, or one missing without allow_partial)."""
    held = len(sdk.results)
    if held == selection["count"] and selection_of(c.id for c in sdk.results) == selection:
        return 0
    if held >= selection["count"] or not allow_partial:
        raise ReportError(
            f"{sdk.label}: the reports hold {held} cases, which are not the "
            f"{selection['count']} selected ones (their ids do not hash to the selection: a "
            "shard missing, or a report edited?)"
            + ("" if held >= selection["count"] else "; pass --allow-partial to merge anyway")
        )
    return selection["count"] - held


def _check_shards(documents: list[tuple[Path, dict]]) -> None:
    """Shards K/N of one run: each of 1..N exactly once."""
    shards = [(path, Shard.parse(d["shard"])) for path, d in documents if _is_shard(d.get("shard"))]
    if not shards:
        return
    counts = {shard.count for _, shard in shards}
    if len(counts) > 1 or len(shards) != len(documents):
        raise ReportError(
            "the reports are not the shards of one run (shard counts "
            f"{sorted(str(d.get('shard')) for _, d in documents)}); "
            "pass --allow-partial to merge them anyway"
        )
    (count,) = counts
    present = sorted(shard.index for _, shard in shards)
    missing = sorted(set(range(1, count + 1)) - set(present))
    if missing:
        listed = ", ".join(f"{index}/{count}" for index in missing)
        raise ReportError(
            f"incomplete shard set: shard {listed} missing; pass --allow-partial to merge anyway"
        )


def _is_shard(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        Shard.parse(text)
    except ValueError:
        return False
    return True


def _absorb(target: SdkRun, sdk: SdkRun, path: Path) -> None:
    seen = {case.id for case in target.results}
    clash = sorted(seen & {case.id for case in sdk.results})
    if clash:
        raise ReportError(
            f"{path}: {sdk.label}: case {clash[0]} is also in an earlier report "
            "(are two reports from the same shard?)"
        )
    target.results.extend(sdk.results)
    target.duration += sdk.duration
    target.starts += sdk.starts
    target.capabilities = target.capabilities or sdk.capabilities
    target.handshake_problems = target.handshake_problems or sdk.handshake_problems
