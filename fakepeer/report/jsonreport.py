"""The JSON report as a file (`--report-json`): the document itself, indented UTF-8 text."""

from __future__ import annotations

import json

from fakepeer.report.registry import Reporter


def document_text(document: dict) -> str:
    """Readable UTF-8, unless a frame held a lone surrogate: then `\\u` escapes throughout."""
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(document, indent=2) + "\n"
    return text


REPORTER = Reporter(
    name="report_json",
    options=("--report-json", "--out"),
    help="Write the JSON report (every case, its diff and wire log) to PATH.",
    noun="the JSON report",
    render=document_text,
    order=10,
)
