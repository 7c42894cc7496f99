"""The JSON report (`--report-json`): build it from a run, read it back (for `merge`).

Its shape is published as report.schema.json; `FORMAT` names the version of that shape.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fakepeer import __version__
from fakepeer.compare import MISSING, Finding
from fakepeer.protocol import strictjson
from fakepeer.protocol.encode import encode_envelope
from fakepeer.protocol.limits import MAX_JSON_NESTING
from fakepeer.protocol.version import PROTOCOL_VERSION
from fakepeer.report.catalog import CaseInfo, Catalog
from fakepeer.report.fleet import fleet_section
from fakepeer.report.missing import missing_pieces
from fakepeer.report.tally import build_tally
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun
from fakepeer.session.wire import WireRecord

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

FORMAT = "ryusen-conform.report/1"
#: Largest report `merge` reads: a case keeps bounded findings and frames, so even a huge
#: corpus's report is far below it.
MAX_REPORT_BYTES = 1 << 30


class ReportError(ValueError):
    """A report file that cannot be read or merged."""


@dataclass(frozen=True)
class RunInfo:
    """Facts about the invocation that the results alone do not tell."""

    shard: str | None = None
    timeout: float | None = None
    catalog: Catalog = field(default_factory=dict, compare=False)  # fixture id -> title, rule
    #: What the whole selection was before sharding (`selection_of`): merge checks it. Without
    #: one, the report's own cases are its selection (every report records one).
    selection: dict | None = None
    #: The corpus version (`cases.corpus_version.CorpusVersion.to_json`), None without one.
    corpus: dict | None = None


def selection_of(fixture_ids: Iterable[str]) -> dict:
    """The fingerprint of a selection of fixtures: how many, and a hash of their sorted ids.

    Every shard of one run records the same one, so `merge` can tell shards of one run from
    reports of different fixture sets, and count the cases a complete merge must hold.
    """
    ids = sorted(set(fixture_ids))
    digest = hashlib.sha256("\n".join(ids).encode("utf-8", "surrogatepass")).hexdigest()
    return {"count": len(ids), "sha256": digest}


def order_of(run: RunResult) -> dict:
    """The order the cases ran in: `shuffle_seed` (None for fixture-id order) and `isolate`."""
    return {"shuffle_seed": run.shuffle_seed, "isolate": run.isolate}


def order_text(order: dict | None) -> str:
    """`cases shuffled with seed N (...)`, `isolated: ...`, or "" for the usual order."""
    order = order or {}
    parts = []
    if order.get("shuffle_seed") is not None:
        seed = order["shuffle_seed"]
        parts.append(f"cases shuffled with seed {seed} (replay the order: --shuffle {seed})")
    if order.get("isolate"):
        parts.append("isolated: a fresh host process per case (--isolate)")
    return "; ".join(parts)


def to_document(run: RunResult, info: RunInfo = RunInfo()) -> dict:
    """The JSON report document of a run."""
    tally = run.counts()
    return {
        "format": FORMAT,
        "tool": {"name": "ryusen-conform", "version": __version__},
        "protocol_version": PROTOCOL_VERSION,
        "corpus": info.corpus,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "strict": run.strict,
        "lenient": run.lenient,
        "shard": info.shard,
        "selection": info.selection
        or selection_of(case.id for sdk in run.sdks for case in sdk.results),
        "case_timeout": info.timeout,
        "exit_status": run.exit_status(),
        "interrupted": run.interrupted,
        "order": order_of(run),
        "list_problems": list(run.list_problems),
        "summary": {**tally, "total": sum(tally.values()), "warnings": run.warning_count()},
        "matrix": build_tally(run).to_json(),
        "sdks": [_sdk_document(sdk, run, info.catalog) for sdk in run.sdks],
        "fleet": fleet_section(run),
    }


def _sdk_document(sdk: SdkRun, run: RunResult, catalog: Catalog) -> dict:
    tally = sdk.counts()
    return {
        "label": sdk.label,
        "command": sdk.command,
        "capabilities": sdk.capabilities,
        "handshake_problems": sdk.handshake_problems,
        "missing_pieces": [piece.to_json() for piece in missing_pieces(sdk.results)],
        "process_starts": sdk.starts,
        "duration": round(sdk.duration, 6),
        "summary": {**tally, "total": sum(tally.values()), "warnings": sdk.warning_count()},
        "cases": [
            _case_document(case, run.strict, run.lenient, catalog.get(case.id))
            for case in sdk.results
        ],
    }


def _case_document(case: CaseResult, strict: bool, lenient: bool, info: CaseInfo | None) -> dict:
    described = {} if info is None else {"title": info.title, "rule": info.rule_json()}
    return {
        "id": case.id,
        **described,
        "category": case.category,
        "level": case.level,
        "outcome": case.outcome.value,
        "raw_outcome": case.raw_outcome.value,
        "fails_run": case.fails_run(strict, lenient),
        "warned": case.warned,
        "invariant_broken": case.invariant_broken,
        "fails_run_by_invariant": case.fails_only_by_invariant(strict),
        "duration": round(case.duration, 6),
        "reason": case.reason,
        "diff": [finding.to_json() for finding in case.findings],
        "diff_text": case.diff,
        **({"diff_dropped": case.findings_dropped} if case.findings_dropped else {}),
        "stderr_tail": case.stderr_tail,
        "wire": [record.to_json() for record in case.wire],
        **({"internal": True} if case.internal else {}),
        **({"not_run": True} if case.not_run else {}),
        **({"missing": case.missing} if case.missing else {}),
    }


def write_document(document: dict, path: Path) -> None:
    """Write the JSON report file, as `--report-json` does (atomically, streamed)."""
    from fakepeer.report.jsonreport import REPORTER

    REPORTER.write(document, path)


def read_document(path: Path) -> dict:
    """Read a JSON report and check it against report.schema.json; ReportError (one line) for
    anything that is not one. Only a regular file of at most MAX_REPORT_BYTES is read: a FIFO or
    a device (`merge /dev/zero`) would be read for ever, and opening a FIFO blocks."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file, so not a report (a FIFO or a device?)")
        if info.st_size > MAX_REPORT_BYTES:
            raise ValueError(
                f"{info.st_size:,} bytes, larger than any report "
                f"(at most {MAX_REPORT_BYTES:,} bytes are read)"
            )
        with path.open("rb") as stream:
            data = stream.read(MAX_REPORT_BYTES + 1)
        if len(data) > MAX_REPORT_BYTES:
            raise ValueError("larger than any report (it grew while read)")
        document = strictjson.loads(data, max_nesting=REPORT_NESTING)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot read the report: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ReportError(f"{path}: not a {FORMAT} report")
    if document.get("selection") is None:
        raise ReportError(
            f"{path}: the report records no selection (it was written by an older bench), so "
            "no merge can tell whether every selected case is in it; re-run it with this bench"
        )
    from jsonschema.exceptions import best_match  # only reading a report back needs it

    error = best_match(_report_validator().iter_errors(document))
    if error is not None:
        pointer = "".join(f"/{part}" for part in error.absolute_path) or "(root)"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        raise ReportError(f"{path}: not a valid {FORMAT} report: at {pointer}: {message}")
    return document


#: A report holds SDK frames (nested up to MAX_JSON_NESTING) a few levels down.
REPORT_NESTING = MAX_JSON_NESTING + 16


@functools.cache
def _report_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).parent / "report.schema.json").read_text("utf-8"))
    return Draft202012Validator(schema)


def run_from_document(document: dict) -> RunResult:
    """Rebuild a RunResult from a report document (for merge and re-rendering)."""
    sdks = []
    for sdk in document["sdks"]:
        run = SdkRun(
            label=sdk["label"],
            command=list(sdk["command"]),
            capabilities=sdk.get("capabilities"),
            handshake_problems=list(sdk.get("handshake_problems", [])),
            starts=sdk.get("process_starts", 0),
            duration=sdk.get("duration", 0.0),
            results=[_case_from_document(case) for case in sdk["cases"]],
        )
        sdks.append(run)
    return RunResult(
        sdks=sdks,
        strict=bool(document.get("strict", False)),
        lenient=bool(document.get("lenient", False)),
        interrupted=bool(document.get("interrupted", False)),
        shuffle_seed=(document.get("order") or {}).get("shuffle_seed"),
        isolate=bool((document.get("order") or {}).get("isolate", False)),
        list_problems=list(document.get("list_problems", [])),
    )


def _case_from_document(case: dict) -> CaseResult:
    return CaseResult(
        id=case["id"],
        category=case["category"],
        level=case["level"],
        outcome=Outcome(case["outcome"]),
        raw_outcome=Outcome(case.get("raw_outcome", case["outcome"])),
        duration=case.get("duration", 0.0),
        reason=case.get("reason", ""),
        findings=[
            Finding(
                f["kind"],
                f["pointer"],
                f["message"],
                f.get("expected", MISSING),
                f.get("actual", MISSING),
                f.get("step", ""),
                f.get("consequence", False),
                f.get("level", "required"),
                f.get("rule", ""),
            )
            for f in case.get("diff", [])
        ],
        stderr_tail=case.get("stderr_tail", ""),
        wire=[_wire_from_document(record) for record in case.get("wire", [])],
        internal=bool(case.get("internal")),
        not_run=bool(case.get("not_run")),
        missing=case.get("missing"),
        findings_dropped=int(case.get("diff_dropped", 0)),
    )


def _wire_from_document(record: dict) -> WireRecord:
    if record.get("truncated"):  # only the head was kept; the rebuilt record stays truncated
        head = record.get("text", "").encode("utf-8", "surrogatepass")
        size, digest = record.get("size", len(head)), record.get("sha256", "0" * 64)
        return WireRecord(record["direction"], record.get("at", 0.0), head, size, digest)
    if "json" in record:
        payload = encode_envelope(record["json"])
    elif "text" in record:
        payload = record["text"].encode("utf-8", "surrogatepass")
    else:
        payload = base64.b64decode(record.get("base64", ""))
    return WireRecord(record["direction"], record.get("at", 0.0), payload)
