"""`fixtures new`: a fixture skeleton in the right folder, with the right id and file name.

The skeleton deliberately fails `validate` until its TODOs are filled (the quote must be real
RFD 2 text), so a scaffold can never be committed by accident as a passing fixture.
"""

from __future__ import annotations

import re
from pathlib import Path

from fakepeer import atomic
from fakepeer.authoring.formatting import format_document
from fakepeer.cases import fixture_schema
from fakepeer.protocol.messages import CONFORM_INSTANCE_ID, CONFORM_RELEASE_ID, CONFORM_SCOPE
from fakepeer.protocol.version import BASE_VERSION

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]*")


class ScaffoldError(Exception):
    """The id, category or target path is not usable; the message says why."""


def categories() -> list[str]:
    """The categories the fixture schema allows."""
    return list(fixture_schema()["properties"]["category"]["enum"])


def _steps(category: str) -> list[dict]:
    if category == "registration":
        return [
            {
                "send": {
                    "kind": "conform.register",
                    "body": {
                        "scope": dict(CONFORM_SCOPE),
                        "release_id": CONFORM_RELEASE_ID,
                        "instance_id": CONFORM_INSTANCE_ID,
                    },
                }
            },
            {"expect": {"kind": "register", "body": {}}, "vary": ["/body/*"]},
            {
                "send": {
                    "kind": "register_ack",
                    "body": {
                        "version": BASE_VERSION,
                        "capabilities": [],
                        "required_capabilities": [],
                    },
                }
            },
            {
                "expect": {
                    "kind": "conform.registration_outcome",
                    "body": {
                        "status": "registered",
                        "version": BASE_VERSION,
                        "capabilities": [],
                    },
                }
            },
        ]
    if category == "manifest":
        return [
            {
                "send": {
                    "kind": "conform.publish",
                    "body": {
                        "scope": dict(CONFORM_SCOPE),
                        "expected_parent": None,
                        "registry": {"functions": [{"id": "f"}], "triggers": []},
                    },
                }
            },
            {"expect": {"kind": "publish_manifest", "body": {}}, "vary": ["/body/*"]},
        ]
    value = {"t": "str", "v": "TODO"}
    return [
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
    ]


def scaffold(fixture_id: str, category: str) -> dict:
    """The skeleton document for a new fixture."""
    if category not in categories():
        raise ScaffoldError(
            f"unknown category {category!r}; expected one of {', '.join(categories())}"
        )
    if not ID_PATTERN.fullmatch(fixture_id):
        raise ScaffoldError(f"id {fixture_id!r} must match [a-z0-9][a-z0-9_.-]*")
    named = fixture_id.split(".", 1)[0]
    if "." in fixture_id and named != category and named in categories():
        # `<category>.<name>` is the corpus's convention, not a rule (docs/fixtures.md), but an id
        # naming another category misleads `-k` and every reader
        raise ScaffoldError(
            f"id {fixture_id!r} names the category {named!r}, not {category!r}: use "
            f"{category}.{fixture_id.split('.', 1)[1]} (or another id)"
        )
    return {
        "id": fixture_id,
        "title": "TODO: one line saying what the SDK must do",
        "rule": {
            "section": "TODO: the RFD 2 topic",
            "quote": "TODO: the exact RFD 2 sentence (a full clause at least) this checks",
            "protocol": "§TODO",
        },
        "category": category,
        "level": "required",
        "capabilities": [],
        "notes": "TODO: the wrong SDK behaviour this fixture catches.",
        "steps": _steps(category),
    }


def write_scaffold(fixture_id: str, category: str, root: Path, force: bool = False) -> Path:
    """Write `<root>/<category>/<id>.json`; refuse to replace an existing file unless `force`."""
    document = scaffold(fixture_id, category)
    path = root / category / f"{fixture_id}.json"
    if path.exists() and not force:
        raise ScaffoldError(f"{path} exists; pass --force to replace it")
    atomic.write_text(path, format_document(document))
    return path
