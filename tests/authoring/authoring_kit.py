"""Helpers for the authoring-tool tests: small fixture documents written to temp folders."""

from __future__ import annotations

import json
from pathlib import Path

QUOTE = (
    "Unknown fields are ignored; unknown required enum variants or capabilities fail explicitly."
)


def fixture_document(
    fixture_id: str = "values.sample", category: str = "values", **changes: object
) -> dict:
    """A small valid fixture: conform.echo round-trips a str."""
    value = {"t": "str", "v": "x"}
    document = {
        "id": fixture_id,
        "title": "A sample",
        "rule": {"section": "Testing", "quote": QUOTE, "protocol": "§2"},
        "category": category,
        "level": "required",
        "capabilities": [],
        "steps": [
            {
                "send": {
                    "kind": "invoke",
                    "body": {
                        "run_id": "run-1",
                        "function_id": "conform.echo",
                        "mode": "discover",
                        "input": value,
                        "history": [],
                    },
                }
            },
            {"expect": {"kind": "completed", "body": {"value": value}}},
        ],
    }
    document.update(changes)
    return document


def write_fixture(root: Path, document: dict, name: str | None = None) -> Path:
    """Write a fixture as <root>/<category>/<name or id>.json (compact, so fmt has work)."""
    path = root / document["category"] / f"{name or document['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
