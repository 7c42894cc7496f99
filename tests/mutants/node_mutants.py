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


def load_node_mutants(path: Path = NODE_CATALOG) -> dict[str, str]:
    """Mutant name -> the fault it injects, in catalog order."""
    catalog = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(catalog, dict) or not all(
        isinstance(name, str) and name.startswith(NODE_PREFIX) and isinstance(fault, str)
        for name, fault in catalog.items()
    ):
        raise ValueError(f"{path}: an object of {NODE_PREFIX}NAME -> fault text")
    return catalog


NODE_MUTANTS: dict[str, str] = load_node_mutants()


def node_host_argv(name: str) -> list[str]:
    """The command starting the Node wrapper host with mutant `name` (or `none`)."""
    return [shutil.which("node") or "node", str(NODE_MUTANT_HOST), name]
