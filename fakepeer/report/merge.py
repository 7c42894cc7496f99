"""Merging shard reports (`ryusen-conform merge`): one report per SDK label, cases unioned.

Shards of a multi-SDK run each hold every SDK with their share of the cases; the merge keeps the
SDKs in the order they first appear, so the tally columns stay in `--sdk` order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import __version__
from fakepeer.cases.selection import Shard
from fakepeer.report.catalog import CaseInfo, catalog_from_document
from fakepeer.report.document import ReportError, read_document, run_from_document
from fakepeer.session.results import RunResult, SdkRun


@dataclass
class Merged:
    """The combined run, and the fixture titles and rules the shard reports recorded."""

    run: RunResult
    catalog: dict[str, CaseInfo] = field(default_factory=dict)
    #: The selection all the reports were shards of (None when unknown or mixed).
    selection: dict | None = None
    #: Each report's recorded exit status: the merge never exits greener than the worst.
    shard_statuses: dict[str, int] = field(default_factory=dict)
    #: The corpus version every report recorded (None when unknown or they differ).
    corpus: dict | None = None


def merge_documents(
    paths: Sequence[Path], *, allow_partial: bool = False, allow_mixed: bool = False
) -> Merged:
    """Combine shard reports, keeping the fixture catalog too (for the HTML report).

    Every input is checked against the report schema. Unless told otherwise, the reports must
    be of one selection of fixtures (`allow_mixed`) and together hold all of it: every shard
    1..N once, every selected case for every SDK (`allow_partial`). A case two reports hold
    for one SDK is an error. An interrupted shard makes the merged run interrupted.
    """
    if not paths:
        raise ReportError("merge needs at least one report")
    documents = [(path, read_document(path)) for path in paths]
    _check_versions(documents)
    selection = _common_selection(documents, allow_mixed)
    if not allow_partial:
        _check_shards(documents)
    merged: dict[str, SdkRun] = {}
    catalog: dict[str, CaseInfo] = {}
    strict = interrupted = lenient = False
    list_problems: list[str] = []
    statuses: dict[str, int] = {}
    for path, document in documents:
        run = run_from_document(document)
        statuses[str(path)] = int(document.get("exit_status", 0))
        list_problems += [p for p in run.list_problems if p not in list_problems]
        catalog.update(catalog_from_document(document))
        strict = strict or run.strict
        interrupted = interrupted or run.interrupted
        lenient = lenient or run.lenient
        for sdk in run.sdks:
            target = merged.get(sdk.label)
            if target is None:
                merged[sdk.label] = sdk
                continue
            _absorb(target, sdk, path)
    for sdk in merged.values():
        sdk.results.sort(key=lambda case: case.id)
        if not allow_partial and selection is not None and len(sdk.results) != selection["count"]:
            raise ReportError(
                f"{sdk.label}: the reports hold {len(sdk.results)} of the "
                f"{selection['count']} selected cases (a shard missing?); "
                "pass --allow-partial to merge them anyway"
            )
    run = RunResult(
        sdks=list(merged.values()),
        strict=strict,
        lenient=lenient,
        interrupted=interrupted,
        list_problems=list_problems,
    )
    corpora = {json.dumps(document.get("corpus"), sort_keys=True) for _, document in documents}
    corpus = json.loads(corpora.pop()) if len(corpora) == 1 else None
    return Merged(run, catalog, selection, statuses, corpus)


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


def _common_selection(documents: list[tuple[Path, dict]], allow_mixed: bool) -> dict | None:
    """The selection every report recorded; ReportError when they differ (unless allowed)."""
    selections = [(path, document.get("selection")) for path, document in documents]
    known = [(path, selection) for path, selection in selections if selection is not None]
    if not known:
        return None
    first_path, first = known[0]
    for path, selection in known[1:]:
        if selection != first and not allow_mixed:
            raise ReportError(
                f"{path} and {first_path} are runs of different fixture selections "
                f"({selection['count']} and {first['count']} fixtures); pass --allow-mixed "
                "to merge them anyway"
            )
    if allow_mixed and any(selection != first for _, selection in known):
        return None
    return first if len(known) == len(documents) else None


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
