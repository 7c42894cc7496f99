"""The JSON report as a file (`--report-json`): the document itself, indented UTF-8 text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from fakepeer.report.registry import Reporter


def document_text(document: dict) -> str:
    """The whole report as one text (see `document_chunks`)."""
    return "".join(document_chunks(document))


def document_chunks(document: dict) -> Iterator[str]:
    """Readable, strict JSON (no NaN or Infinity: a report is always JSON), piece by piece.

    A lone surrogate (a frame may hold one, e.g. `values.str-lone-surrogate-refused`) has no
    UTF-8, so it alone is written as its `\\uXXXX` escape, which every JSON reader reads back.
    """
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)
    for chunk in encoder.iterencode(document):
        yield _SURROGATE.sub(_escape_surrogate, chunk)
    yield "\n"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


REPORTER = Reporter(
    name="report_json",
    options=("--report-json", "--out"),
    help="Write the JSON report (every case, its diff and wire log) to PATH.",
    noun="the JSON report",
    render=document_text,
    chunks=document_chunks,
    order=10,
)
