"""Count the lines of code of every module of fakepeer/, data tables apart (issue 38).

    python scripts/module_sizes.py              # largest first: code, data, total lines
    python scripts/module_sizes.py --over 600   # only modules above the bound; exit 1 if any

A code line holds at least one token of code: blank lines, comment lines and docstrings (the
string that opens a module, class or function) do not count. A data table is a module-level
assignment of at least DATA_MIN_LINES lines whose value is built only from literals, names,
attribute reads, calls and operators (no comprehension, lambda or condition), such as the JSON
Schemas of protocol/shapes.py or the catalog rows of protocol/messages.py: its lines count as
data, not code. tests/test_layers.py holds every module to MAX_CODE_LINES lines of code.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fakepeer"
#: A literal assignment shorter than this is code like any other line.
DATA_MIN_LINES = 20
_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_LOGIC = (ast.comprehension, ast.Lambda, ast.IfExp, ast.BoolOp, ast.Compare, ast.NamedExpr)


class ModuleSize(NamedTuple):
    """One module's lines: of code, of data tables, and in all."""

    path: Path
    code: int
    data: int
    total: int


def _docstring_lines(tree: ast.Module) -> set[int]:
    """Line numbers of the docstrings of the module and of every class and function."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _is_table(statement: ast.stmt) -> bool:
    """Whether a module-level statement assigns a long value made of data, not logic."""
    if not isinstance(statement, ast.Assign | ast.AnnAssign) or statement.value is None:
        return False
    if statement.end_lineno - statement.lineno + 1 < DATA_MIN_LINES:
        return False
    return not any(isinstance(node, _LOGIC) for node in ast.walk(statement.value))


def _table_lines(tree: ast.Module) -> set[int]:
    """Line numbers of the module's data tables."""
    lines: set[int] = set()
    for statement in tree.body:
        if _is_table(statement):
            lines.update(range(statement.lineno, statement.end_lineno + 1))
    return lines


def measure(path: Path) -> ModuleSize:
    """The code, data and total lines of one Python file."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    skipped = _docstring_lines(tree)
    tables = _table_lines(tree)
    with_tokens: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NOT_CODE:
            with_tokens.update(range(token.start[0], token.end[0] + 1))
    code = len(with_tokens - skipped - tables)
    data = len(with_tokens & tables)
    return ModuleSize(path, code, data, len(text.splitlines()))


def code_lines(package: Path = PACKAGE) -> list[ModuleSize]:
    """Every module of the package, most lines of code first."""
    sizes = [measure(path) for path in sorted(package.rglob("*.py"))]
    return sorted(sizes, key=lambda size: (-size.code, str(size.path)))


def main(argv: list[str] | None = None) -> int:
    """Print the table; with --over N, only the modules above N lines of code (exit 1 if any)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--over", type=int, help="list only modules with more code lines")
    parser.add_argument("--top", type=int, default=0, help="list only the N largest")
    args = parser.parse_args(argv)
    sizes = code_lines()
    shown = [s for s in sizes if args.over is None or s.code > args.over]
    if args.top:
        shown = shown[: args.top]
    print(f"{'code':>6} {'data':>6} {'total':>6}  module")
    for size in shown:
        name = size.path.relative_to(ROOT)
        print(f"{size.code:>6} {size.data:>6} {size.total:>6}  {name}")
    code = sum(s.code for s in sizes)
    data = sum(s.data for s in sizes)
    total = sum(s.total for s in sizes)
    print(f"{code:>6} {data:>6} {total:>6}  ({len(sizes)} modules)")
    return 1 if args.over is not None and shown else 0


if __name__ == "__main__":
    sys.exit(main())
