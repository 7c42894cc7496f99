"""Fixture problems, reported as `file: pointer: what was expected` lines, never tracebacks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FixtureProblem:
    """One defect in one fixture file, located by a JSON pointer into that file."""

    file: Path | None
    pointer: str
    message: str

    def __str__(self) -> str:
        where = str(self.file) if self.file is not None else "<fixture>"
        return f"{where}: {self.pointer or '(root)'}: {self.message}"


class FixtureError(Exception):
    """One or more fixtures cannot be loaded; `problems` lists every defect found."""

    def __init__(self, problems: Sequence[FixtureProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))
