"""A shrunk semantic counterexample as a draft fixture (`<id>.recorded.json`).

Why a draft and not a fixture: the oracle is one reading of the text; a fixture also needs
the RFD 2 sentence it checks and a person's review (docs/fixtures.md), so `fixtures validate`
refuses the draft until it is renamed `<id>.json` with its quote filled in.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from fakepeer import atomic
from fakepeer.fuzz.programs import SemanticCase
from fakepeer.oracle import Expectation

CATEGORY_OF_KIND = {
    "declared": "discovery",
    "completed": "discovery",
    "failed": "errors",
    "definition_blocked": "duplicates",
    "step_completed": "forward",
    "step_failed": "forward",
    "compensation_completed": "compensation",
    "compensation_failed": "compensation",
    "target_not_found": "targets",
    "rejected_before_start": "targets",
    "protocol_error": "requests",
}
SECTION_OF_KIND = {"discovery": "§11.2", "errors": "§11.5", "duplicates": "§11.2",
                   "forward": "§11.3", "compensation": "§11.4", "targets": "§11.3",
                   "requests": "§11.2"}  # fmt: skip
DRAFT_SUFFIX = ".recorded.json"
TODO_QUOTE = "TODO: the RFD 2 sentence this case checks (copied exactly)"


def draft_id(case: SemanticCase, expectation: Expectation) -> str:
    """A stable id from the case itself: the same counterexample gets the same file."""
    text = json.dumps([case.body, case.ambient, case.admission], sort_keys=True)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{CATEGORY_OF_KIND.get(expectation.kind, 'discovery')}.fuzz-semantic-{digest}"


def draft_document(case: SemanticCase, expectation: Expectation, problem: str, sdk: str) -> dict:
    """The draft: host-state steps, the invoke, and the oracle's answer and trace."""
    category = CATEGORY_OF_KIND.get(expectation.kind, "discovery")
    steps: list[dict] = []
    for key, value in case.ambient:
        steps.append(
            {"send": {"kind": "conform.set_ambient", "body": {"key": key, "value": value}}}
        )
        steps.append({"expect": {"kind": "conform.ack", "body": {}}})
    if not case.admission:
        steps.append({"send": {"kind": "conform.set_admission", "body": {"open": False}}})
        steps.append({"expect": {"kind": "conform.ack", "body": {}}})
    steps.append({"send": {"kind": "invoke", "body": case.body}})
    body = json.loads(json.dumps(expectation.body))
    if expectation.kind == "rejected_before_start":
        body["request_id"] = "TODO: this exchange's id, <fixture id>#<n>"
    expect: dict = {"expect": {"kind": expectation.kind, "body": body}}
    if expectation.open:
        expect["vary"] = list(expectation.open)
    events = [event for event in expectation.trace if event.get("what") != "suspension"]
    if any(event["event"] == "caught" for event in events):
        expect["trace"] = {"events": events}
    else:
        expect["trace"] = {"events": events, "only": ["started"]}
    steps.append(expect)
    ident = draft_id(case, expectation)
    return {
        "id": ident,
        "title": f"TODO: one line (fuzz --semantics found: {expectation.why})",
        "rule": {
            "section": "SDK invocation semantics",
            "quote": TODO_QUOTE,
            "protocol": SECTION_OF_KIND[category],
        },  # fmt: skip
        "category": category,
        "level": "required",
        "capabilities": [],
        "notes": (
            f"DRAFT from `ryusen-conform fuzz --semantics` (shrunk) against {sdk}: {problem}. "
            "The expectation is the oracle's (fakepeer/oracle): check it against RFD 2 and "
            "docs/protocol.md, fill in the quote and title, set the level, then save as <id>.json."
        ),
        "steps": steps,
    }


def write_draft(document: dict, out: Path) -> Path:
    """Write `<out>/<category>/<id>.recorded.json` and return the path."""
    path = out / document["category"] / f"{document['id']}{DRAFT_SUFFIX}"
    atomic.write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return path
