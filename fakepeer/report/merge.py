"""Merging shard reports (`ryusen-conform merge`): one report per SDK label, cases unioned.

Shards of a multi-SDK run each hold every SDK with their share of the cases; the merge keeps the
SDKs in the order they first appear, so the matrix columns stay in `--sdk` order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer.report.catalog import CaseInfo, catalog_from_document
from fakepeer.report.document import ReportError, read_document, run_from_document
from fakepeer.session.results import RunResult, SdkRun


@dataclass
class Merged:
    """The combined run, and the fixture titles and rules the shard reports recorded."""

    run: RunResult
    catalog: dict[str, CaseInfo] = field(default_factory=dict)


def merge_documents(paths: Sequence[Path]) -> Merged:
    """Combine shard reports; a case reported by two shards for one SDK is an error."""
    if not paths:
        raise ReportError("merge needs at least one report")
    merged: dict[str, SdkRun] = {}
    catalog: dict[str, CaseInfo] = {}
    strict = lenient = False
    for path in paths:
        document = read_document(path)
        run = run_from_document(document)
        catalog.update(catalog_from_document(document))
        strict = strict or run.strict
        lenient = lenient or run.lenient
        for sdk in run.sdks:
            target = merged.get(sdk.label)
            if target is None:
                merged[sdk.label] = sdk
                continue
            _absorb(target, sdk, path)
    for sdk in merged.values():
        sdk.results.sort(key=lambda case: case.id)
    return Merged(RunResult(sdks=list(merged.values()), strict=strict, lenient=lenient), catalog)


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
