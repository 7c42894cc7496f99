"""Generate the JSON Schema files of `schemas/` from the catalog (messages.py and shapes.py).

The files are the published surface (`ryusen-conform schema`); the catalog is their one source.
`python scripts/generate_schemas.py` rewrites them, `--check` lists the stale ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakepeer import atomic
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.shapes import COMMON_DEFS, COMMON_TITLE

BASE_URI = "https://schemas.ryusen.dev/protocol/1/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
ENVELOPE_NOTE = "The whole envelope (§2). Unknown members are ignored except inside tagged values."


def section_document(section: str) -> str:
    """The file that defines a protocol section: §12-§13 (the host contract) have their own."""
    return "docs/host-contract.md" if section.split(".")[0] in {"12", "13"} else "docs/protocol.md"


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name -> schema document: `common.schema.json`, then one per kind in catalog order."""
    documents = {
        "common.schema.json": {
            "$schema": DRAFT,
            "$id": BASE_URI + "common.schema.json",
            "title": COMMON_TITLE,
            "$defs": COMMON_DEFS,
        }
    }
    for name, kind in KINDS.items():
        documents[f"{name}.schema.json"] = {
            "$schema": DRAFT,
            "$id": f"{BASE_URI}{name}.schema.json",
            "title": f"{name} ({kind.direction}, {section_document(kind.section)} §{kind.section})",
            "description": ENVELOPE_NOTE,
            "type": "object",
            "required": ["version", "kind", "id", "body"],
            "properties": {
                "version": {"$ref": "common.schema.json#/$defs/version"},
                "kind": {"const": name},
                "id": {"$ref": "common.schema.json#/$defs/id"},
                "body": kind.body,
            },
        }
    return documents


def render(document: dict[str, Any]) -> str:
    """Stable text: 2-space indent, UTF-8, one trailing newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def stale_files(folder: Path = SCHEMA_DIR) -> list[str]:
    """Why each schema file in `folder` differs from the catalog ([] when all are current)."""
    expected = {name: render(doc) for name, doc in schema_documents().items()}
    problems = []
    for name, text in expected.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{name} differs from the catalog")
    for path in sorted(folder.glob("*.schema.json")):
        if path.name not in expected:
            problems.append(f"{path.name} belongs to no kind of the catalog")
    return problems


def write_schemas(folder: Path = SCHEMA_DIR) -> list[Path]:
    """Rewrite every schema file from the catalog and delete files of kinds it no longer has."""
    folder.mkdir(parents=True, exist_ok=True)
    documents = schema_documents()
    for path in folder.glob("*.schema.json"):
        if path.name not in documents:
            path.unlink()
    written = []
    for name, document in documents.items():
        path = folder / name
        atomic.write_text(path, render(document))
        written.append(path)
    return written
