"""A fuzz counterexample as a ready-to-commit fixture file (docs/fixtures.md), category `values`.

Why a fixture: a shrunk counterexample is only worth something once it is part of the corpus and
every SDK is held to it. Portable values become a send/expect round trip; malformed ones a
`send_raw` of the exact frame (so lone surrogates survive) and an expected `protocol_error`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from fakepeer import atomic
from fakepeer.cases import fixture_from_document
from fakepeer.fuzz.checks import expected_error
from fakepeer.fuzz.echo import ECHO_FUNCTION, invoke_payload
from fakepeer.fuzz.strategies import LIMIT_EXCEEDED, FuzzCase

ROUND_TRIP_QUOTE = (
    "An SDK converts between idiomatic language values and the tagged model in both directions "
    "and must preserve the distinctions above"
)
REFUSAL_QUOTE = "malformed values"
LIMIT_QUOTE = (
    "the payload limits as the execution-request, replay, and nesting bounds recorded in RFD 6"
)


def fixture_id(case: FuzzCase) -> str:
    """A stable id from the document itself, so the same counterexample gets the same file."""
    digest = hashlib.sha256(invoke_payload("-", case.doc)).hexdigest()[:12]
    return f"values.fuzz-{'round-trip' if case.portable else 'refusal'}-{digest}"


def fixture_document(case: FuzzCase, problem: str, sdk: str) -> dict:
    """The fixture document (checked against the fixture schema and loader rules)."""
    ident = fixture_id(case)
    if case.portable:
        rule = {"section": "Protocol values", "quote": ROUND_TRIP_QUOTE, "protocol": "§3.5"}
        title = "Fuzz: a portable value comes back through conform.echo exactly"
        body = {"run_id": "run-1", "function_id": ECHO_FUNCTION, "mode": "discover",
                "input": case.doc, "history": []}  # fmt: skip
        steps = [
            {"send": {"kind": "invoke", "body": body}},
            {"expect": {"kind": "completed", "body": {"value": case.doc}}},
        ]
    else:
        limit = case.category == LIMIT_EXCEEDED
        rule = {"section": "Protocol values", "quote": LIMIT_QUOTE if limit else REFUSAL_QUOTE,
                "protocol": "§4.3" if limit else "§3.4"}  # fmt: skip
        title = f"Fuzz: {case.defect} is refused at its pointer"
        raw = invoke_payload(f"{ident}#1", case.doc).decode("ascii")
        steps = [
            {"send_raw": raw},
            {"expect": {"kind": "protocol_error", "body": {"error": expected_error(case)}},
             "vary": ["/body/error/message"]},
        ]  # fmt: skip
    document = {
        "id": ident,
        "title": title,
        "rule": rule,
        "category": "values",
        "level": "required",
        "capabilities": [],
        "notes": f"Found by `ryusen-conform fuzz` (shrunk) against {sdk}: {problem}",
        "steps": steps,
    }
    fixture_from_document(json.loads(fixture_text(document)))  # raises FixtureError if invalid
    return document


def fixture_text(document: dict) -> str:
    """The file text: two-space indentation, UTF-8 where possible, `\\u` escapes otherwise."""
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False)
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(document, indent=2, ensure_ascii=True)
    return text + "\n"


def write_fixture(document: dict, out: Path) -> Path:
    """Write `<out>/values/<id>.json` (the corpus layout) and return the path."""
    path = out / document["category"] / f"{document['id']}.json"
    atomic.write_text(path, fixture_text(document))
    return path
