"""ARCHITECTURE.md's one rule between layers: a module imports only its own layer or lower ones.

Lower means earlier in this list (the picture in ARCHITECTURE.md, top to bottom). `oracle`
uses only `protocol`: it is an independent reading of the SDK rules. `authoring`,
`fuzz`, `server` and the pytest plugin sit beside `cli` and may use every layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fakepeer"
#: Plain utilities with no bench knowledge count as the bottom layer.
LAYERS = [
    {"atomic", "interrupts", "streams", "protocol"},
    {"oracle"},
    {"transport"},
    {"cases"},
    {"compare"},
    {"session"},
    {"suite"},
    {"report"},
    {"cli", "authoring", "fuzz", "server", "pytest_plugin", "__main__", "__init__"},
]


def _layer(part: str) -> int:
    (index,) = [i for i, names in enumerate(LAYERS) if part in names]
    return index


def _imports(path: Path) -> set[str]:
    """The first component below `fakepeer` of every fakepeer import in `path` (any depth)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "fakepeer" and len(parts) > 1:
                found.add(parts[1])
    return found - {"__version__"}


def test_every_module_is_in_a_layer() -> None:
    for path in PACKAGE.iterdir():
        if path.suffix == ".py" or (path / "__init__.py").exists():
            _layer(path.stem if path.suffix == ".py" else path.name)


def test_no_module_imports_a_higher_layer() -> None:
    wrong = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _layer(path.relative_to(PACKAGE).parts[0].removesuffix(".py"))
        for imported in _imports(path):
            if imported != "_bundle" and _layer(imported) > own:
                wrong.add(f"{path.relative_to(PACKAGE)} imports fakepeer.{imported}")
    assert not wrong, "an import runs up the layers (ARCHITECTURE.md):\n" + "\n".join(sorted(wrong))
