"""Merging shard reports (`ryusen-conform merge`): one report per SDK label, cases unioned."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fakepeer.report.document import ReportError, read_document, run_from_document
from fakepeer.session.results import RunResult, SdkRun


def merge_reports(paths: Sequence[Path]) -> RunResult:
    """Combine shard reports; a case reported by two shards for one SDK is an error."""
    if not paths:
        raise ReportError("merge needs at least one report")
    merged: dict[str, SdkRun] = {}
    strict = False
    for path in paths:
        document = read_document(path)
        run = run_from_document(document)
        strict = strict or run.strict
        for sdk in run.sdks:
            target = merged.get(sdk.label)
            if target is None:
                merged[sdk.label] = sdk
                continue
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
    for sdk in merged.values():
        sdk.results.sort(key=lambda case: case.id)
    return RunResult(sdks=list(merged.values()), strict=strict)
