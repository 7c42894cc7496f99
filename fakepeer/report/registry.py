"""The report formats: every module of `fakepeer.report` that defines `REPORTER` is one.

Each format renders the JSON report document (report.schema.json) with the one signature
`render(document) -> str` (or, for a format that can stream, `chunks(document)` yielding the
same text piece by piece, so a large report is never held whole in memory), so `run` and `merge`
write every format through one loop and one option list, and adding a format is one new module
here (its `REPORTER` names its option and help).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fakepeer import atomic


@dataclass(frozen=True)
class Reporter:
    """One report format: its command-line options, what it is called, how it renders."""

    name: str  # the keyword the option loop uses, e.g. "junit"
    options: tuple[str, ...]  # e.g. ("--junit",): each takes the PATH to write
    help: str
    noun: str  # "JUnit XML", for "wrote JUnit XML to PATH"
    render: Callable[[dict], str]
    order: int = 50  # the order of the options in --help and of the writes
    #: Optional streaming form of `render`: the same text, in pieces.
    chunks: Callable[[dict], Iterable[str]] | None = None

    def write(self, document: dict, path: Path) -> None:
        """Write the rendered report atomically (`fakepeer.atomic`); OSError when it cannot."""
        if self.chunks is None:
            atomic.write_text(path, self.render(document))
            return
        with atomic.replacing(path) as stream:
            for piece in self.chunks(document):
                stream.write(piece.encode("utf-8"))


@cache
def reporters() -> tuple[Reporter, ...]:
    """Every registered format, by `order` then name."""
    found = []  # the modules beside this one (not `import fakepeer.report`: it imports this)
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        loaded = importlib.import_module(f"{__package__}.{module.name}")
        reporter = getattr(loaded, "REPORTER", None)
        if isinstance(reporter, Reporter):
            found.append(reporter)
    return tuple(sorted(found, key=lambda reporter: (reporter.order, reporter.name)))
