"""The Node mutant catalog: `node_mutants.json`, read without starting node.

Why: the kill matrix covers both reference SDKs. Node mutants are patched in memory by
`node_mutant_host.js NAME` (the SDK's files are never modified); their names carry the `node:`
prefix so they never clash with the Python mutants of `patches.py`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_MUTANT_HOST = HERE / "node_mutant_host.js"
NODE_CATALOG = HERE / "node_mutants.json"
NODE_PREFIX = "node:"


def _entries(path: Path) -> dict[str, dict[str, str]]:
    """Each mutant's entry: `fault`, and `recommended_only` (a decision) when it has one. A
    catalog value is the fault text, or `{"fault": text, "recommended_only": "D-NAME"}` for a
    fault in recommended behaviour only (as `patches.py`'s `recommended_only`)."""
    catalog = json.loads(path.read_text(encoding="utf-8"))
    problem = ValueError(
        f"{path}: an object of {NODE_PREFIX}NAME -> fault text, or -> "
        '{"fault": text, "recommended_only": "D-NAME"}'
    )
    if not isinstance(catalog, dict):
        raise problem
    entries = {}
    for name, value in catalog.items():
        entry = {"fault": value} if isinstance(value, str) else value
        if (
            not (isinstance(name, str) and name.startswith(NODE_PREFIX))
            or not isinstance(entry, dict)
            or not isinstance(entry.get("fault"), str)
            or set(entry) - {"fault", "recommended_only"}
            or not isinstance(entry.get("recommended_only", ""), str)
        ):
            raise problem
        entries[name] = entry
    return entries


def load_node_mutants(path: Path = NODE_CATALOG) -> dict[str, str]:
    """Mutant name -> the fault it injects, in catalog order."""
    return {name: entry["fault"] for name, entry in _entries(path).items()}


def load_node_recommended_only(path: Path = NODE_CATALOG) -> dict[str, str]:
    """The Node mutants that break recommended behaviour only -> the decision."""
    return {
        name: entry["recommended_only"]
        for name, entry in _entries(path).items()
        if "recommended_only" in entry
    }


NODE_MUTANTS: dict[str, str] = load_node_mutants()
NODE_RECOMMENDED_ONLY: dict[str, str] = load_node_recommended_only()


def node_host_argv(name: str) -> list[str]:
    """The command starting the Node wrapper host with mutant `name` (or `none`)."""
    return [shutil.which("node") or "node", str(NODE_MUTANT_HOST), name]
