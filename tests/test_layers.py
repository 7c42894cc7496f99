"""ARCHITECTURE.md's one rule between layers: a module imports only its own layer or lower ones.

Lower means earlier in this list (the picture in ARCHITECTURE.md, top to bottom). `oracle`
uses only `protocol`: it is an independent reading of the SDK rules. `authoring`,
`fuzz`, `server` and the pytest plugin sit beside `cli` and may use every layer.
No import circles either, and no module longer than MAX_CODE_LINES lines of code (issue 38).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from tests.support.helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fakepeer"
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


# ----------------------------------------------------------------------------- import circles
#
# A module's edges are every import it names, at any depth (an import deferred into a function
# is still a dependency, only a hidden one). `from package import name` points at the module
# `package/name.py` when there is one, else at the package's `__init__.py`; importing a module
# does not count as importing its parent packages (Python runs them first, without a circle).


def _python_graph(roots: Iterable[Path], base: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports, among the .py files under `roots` (paths from `base`)."""
    files = {p.relative_to(base).as_posix(): p for r in roots for p in sorted(r.rglob("*.py"))}

    def module_file(dotted: str) -> str | None:
        stem = dotted.replace(".", "/")
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            if candidate in files:
                return candidate
        return None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name.rsplit("/", 1)[0].split("/") if "/" in name else []
        if name.endswith("/__init__.py"):
            package = name.split("/")[:-1]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [module_file(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package[: len(package) - node.level + 1]
                    module = ".".join([*parts, *(node.module or "").split(".")]).strip(".")
                else:
                    module = node.module or ""
                targets = [
                    module_file(f"{module}.{alias.name}") or module_file(module)
                    for alias in node.names
                ]
            else:
                continue
            edges.update(t for t in targets if t is not None and t != name)
        graph[name] = edges
    return graph


_JS_IMPORT = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"](\.{1,2}/[^'"]+)['"]"""
)
_JS_COMMENT = re.compile(r"/\*.*?\*/|^\s*//.*?$", re.DOTALL | re.MULTILINE)


def _js_graph(files: Iterable[Path], base: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports (import ... from, export ... from, import(), require)."""
    graph: dict[str, set[str]] = {}
    for path in files:
        code = _JS_COMMENT.sub("", path.read_text(encoding="utf-8"))
        edges = set()
        for relative in _JS_IMPORT.findall(code):
            target = (path.parent / relative).resolve()
            if target.suffix == "":
                target = target.with_suffix(".js")
            edges.add(target.relative_to(base).as_posix())
        graph[path.relative_to(base).as_posix()] = edges
    return graph


def _graphs() -> dict[str, dict[str, set[str]]]:
    python_sdk = ROOT / "runners" / "python"
    node_sdk = ROOT / "runners" / "node"
    node_files = sorted((node_sdk / "src").glob("*.js")) + [
        node_sdk / "host.js",
        node_sdk / "http.js",
    ]
    return {
        "the bench (fakepeer/)": _python_graph([PACKAGE], ROOT),
        "the Python reference SDK": _python_graph(
            [python_sdk / "ryusen_sdk", python_sdk / "conform_host"], python_sdk
        ),
        "the Node reference SDK": _js_graph(node_files, node_sdk),
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan), as a path that
    ends where it starts, so the message names every module on it in import order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_in(graph, group) for group in groups]


def _circle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no circle in {sorted(group)}")


def test_no_import_circles() -> None:
    found = [
        f"{where}: " + " -> ".join(circle)
        for where, graph in _graphs().items()
        for circle in _cycles(graph)
    ]
    assert not found, "import circle (give the dependency one direction):\n" + "\n".join(found)


def test_the_circle_finder_names_a_planted_circle() -> None:
    graph = {"a.py": {"b.py"}, "b.py": {"c.py"}, "c.py": {"a.py", "d.py"}, "d.py": set()}
    assert _cycles(graph) == [["a.py", "b.py", "c.py", "a.py"]]
    assert _cycles({"a.py": {"b.py"}, "b.py": set()}) == []


#: Issue 38: no module of fakepeer/ holds more than about this many lines of code (data tables
#: aside, counted by scripts/module_sizes.py); a longer one is split by job.
MAX_CODE_LINES = 600


def _module_sizes():  # noqa: ANN202 - a module object
    return load_script("module_sizes")


def test_no_module_holds_more_than_600_lines_of_code() -> None:
    over = [
        f"{size.path.relative_to(ROOT)}: {size.code} lines of code"
        for size in _module_sizes().code_lines(PACKAGE)
        if size.code > MAX_CODE_LINES
    ]
    assert not over, (
        f"over {MAX_CODE_LINES} lines of code (split by job; `python scripts/module_sizes.py`):\n"
        + "\n".join(over)
    )


def test_the_size_count_leaves_out_docstrings_comments_and_tables(tmp_path: Path) -> None:
    code = "\n".join(f"x{i} = {i}  # a comment" for i in range(MAX_CODE_LINES + 1))
    table = "\n".join(["ROWS = {"] + [f'    "k{i}": [{i}, "v"],' for i in range(700)] + ["}"])
    logic = "\n".join(["LOGIC = ["] + [f"    {i} if x0 else 0," for i in range(30)] + ["]"])
    source = '"""A module."""\n\n# comment\n\ndef f() -> None:\n    """Doc\n    string."""\n\n'
    path = tmp_path / "long.py"
    path.write_text(source + code + "\n" + table + "\n" + logic + "\n", encoding="utf-8")
    size = _module_sizes().measure(path)
    assert (size.code, size.data) == (1 + MAX_CODE_LINES + 1 + 32, 702)
    over = [s for s in _module_sizes().code_lines(tmp_path) if s.code > MAX_CODE_LINES]
    assert [s.path for s in over] == [path]
