"""ARCHITECTURE.md names only files and code that exist: a module split or renamed leaves no
stale path (`server/loop.py`) or dotted name (`cli/options.UsageProblem`) behind in the map.

Read statically (the AST, never an import), so the check is cheap. A path is found relative to
the checkout or to `fakepeer/`, or as the end of a file's path; a bare file name (`loop.py`, in
a list under its folder) as the name of some file; `<placeholder>` and `CATEGORY` parts match
anything. A dotted name starts at a module of `fakepeer/` (`session.case.run_case`, `base` for
`transport/base.py`) or a class of it (`Comparer.compare`), and each further part must be
defined there: a module's top-level name or submodule, a class's member or `self.` attribute.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from functools import cache
from pathlib import Path

from fakepeer.cases import repository_root

ROOT = repository_root()
PACKAGE = ROOT / "fakepeer"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
#: Folders whose files the map never names (and which are large).
SKIPPED = {".git", "node_modules", "__pycache__", ".venv", ".pytest_cache", ".ruff_cache"}
#: A file name: folders, a name and one of the extensions the repository's files have.
PATH = re.compile(r"(?<![\w./<>*-])[\w./<>*-]+\.(?:py|json|md|js|txt|toml)\b")
#: A dotted name in backticks: `module.name`, `folder/module.name`, `Class.member()`.
DOTTED = re.compile(r"`([A-Za-z_][\w/]*(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")
#: First parts of dotted names that are no code of the bench: message kinds of the host
#: contract (`conform.reset`), fixture members (`rule.quote`), typer's API.
NOT_BENCH_CODE = {"conform", "rule", "app", "typer"}
#: Files a command writes for a person to look at, never kept in the checkout.
WRITTEN_NOT_KEPT = {"<id>.recorded.json"}


@cache
def _files() -> tuple[str, ...]:
    """Every file of the checkout, as a path relative to its root ("fakepeer/cli/run.py")."""
    found = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name not in SKIPPED:
                    stack.append(entry)
            else:
                found.append(entry.relative_to(ROOT).as_posix())
    return tuple(found)


def path_exists(token: str) -> bool:
    """Whether a file name as ARCHITECTURE.md writes it names a file of the checkout."""
    pattern = re.sub(r"<[^>]+>|\b[A-Z]{2,}\b", "*", token)
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern) for path in _files())
    return any(
        fnmatch.fnmatchcase(path, pattern)
        or fnmatch.fnmatchcase(path, f"fakepeer/{pattern}")
        or fnmatch.fnmatchcase(path, f"*/{pattern}")
        for path in _files()
    )


def _module_names() -> dict[str, Path]:
    """Dotted names under `fakepeer` ("session.case", "cli" for a package) -> their file."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            modules[".".join(parts)] = path
    return modules


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defined(body: list[ast.stmt]) -> set[str]:
    """The names a module's or class's body defines, imported ones included."""
    names = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _class_members(node: ast.ClassDef) -> set[str]:
    """What a class body defines, and every `self.NAME` its methods assign."""
    members = _defined(node.body)
    for child in ast.walk(node):
        if (
            isinstance(child, ast.Attribute)
            and isinstance(child.ctx, ast.Store)
            and isinstance(child.value, ast.Name)
            and child.value.id == "self"
        ):
            members.add(child.attr)
    return members


@cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    """Every class of `fakepeer`, by name (a name may be defined more than once)."""
    classes: dict[str, list[ast.ClassDef]] = {}
    for path in _module_names().values():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(node)
    return classes


def _resolves_in_module(modules: dict[str, Path], module: str, rest: list[str]) -> bool:
    """`rest` names a submodule or top-level name of `module`, then a member of that class."""
    name, *members = rest
    if f"{module}.{name}" in modules:
        return not members or _resolves_in_module(modules, f"{module}.{name}", members)
    if name not in _defined(_tree(modules[module]).body):
        return False
    return not members or any(
        members[0] in _class_members(node)
        for node in ast.walk(_tree(modules[module]))
        if isinstance(node, ast.ClassDef) and node.name == name
    )


def dotted_problem(reference: str) -> str | None:
    """Why a dotted name of ARCHITECTURE.md names nothing of the bench, or None when it does."""
    head, *rest = reference.split(".")
    first = head.replace("/", ".")
    if first in NOT_BENCH_CODE:
        return None
    modules = _module_names()
    starts = [name for name in modules if name == first or name.endswith(f".{first}")]
    if starts:
        if any(_resolves_in_module(modules, start, rest) for start in starts):
            return None
        return f"no {'.'.join(rest)} in {', '.join(sorted(starts))}"
    if first in _classes():
        if any(rest[0] in _class_members(node) for node in _classes()[first]):
            return None
        return f"no member {rest[0]} in class {first}"
    return f"{head} is neither a module nor a class of fakepeer/"


def stale_references(text: str) -> list[str]:
    """Every file name and dotted name in `text` that names nothing, with the reason."""
    stale = []
    for token in sorted(set(PATH.findall(text))):
        if token not in WRITTEN_NOT_KEPT and not path_exists(token):
            stale.append(f"{token}: no such file")
    for reference in sorted(set(DOTTED.findall(text))):
        if PATH.fullmatch(reference):
            continue
        problem = dotted_problem(reference)
        if problem is not None:
            stale.append(f"{reference}: {problem}")
    return stale


def test_architecture_names_only_files_and_code_that_exist() -> None:
    stale = stale_references(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not stale, "stale names in ARCHITECTURE.md:\n" + "\n".join(stale)


def test_a_stale_path_or_name_is_caught() -> None:
    planted = (
        "`server/loop.py` and `server/looping.py`; loop.py, `protocol/messages.py` and "
        "`session/case.run_case`, `session/case.run_cases`, `cli/options.UsageProblem`, "
        "`cli/option.UsageProblem`, `Comparer.compare`, `Comparer.compares`, "
        "`fakepeer/report/<format>.py`, `fakepeer/reports/<format>.py`, `conform.reset`"
    )
    assert stale_references(planted) == [
        "fakepeer/reports/<format>.py: no such file",
        "server/looping.py: no such file",
        "Comparer.compares: no member compares in class Comparer",
        "cli/option.UsageProblem: cli/option is neither a module nor a class of fakepeer/",
        "session/case.run_cases: no run_cases in session.case",
    ]
