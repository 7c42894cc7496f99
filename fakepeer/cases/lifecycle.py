"""Lifecycle scenarios: whole runs as data (docs/fixtures.md "Lifecycle scenarios").

A lifecycle fixture names a function and its input, a script of events and environment changes at
virtual times, faults, and the expected outcome. It is loaded like any fixture (same id, rule,
level and capabilities; shown in matrix.json and coverage) and played by the model server
(`fakepeer.server`), not as a list of exchanges.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from fakepeer.cases.errors import FixtureError, FixtureProblem
from fakepeer.cases.macros import MacroError, expand
from fakepeer.cases.model import Fixture
from fakepeer.cases.schema import schema_problems

SCHEMA_FILE = "lifecycle.schema.json"
MEMBER = "lifecycle"


@dataclass(frozen=True)
class LifecycleSpec:
    """The expanded scenario: tagged input, script items, faults and expectation as JSON."""

    function: str
    input: dict
    script: tuple[dict, ...]
    faults: tuple[dict, ...]
    expect: dict
    policy: dict | None = None

    def expand(self) -> LifecycleSpec:
        """The scenario to play (this one: built in memory, it is expanded already)."""
        return self


@dataclass(frozen=True)
class CompactLifecycle:
    """A loaded scenario kept as its checked member's bytes, compressed, and expanded each time
    it is played: expanded (`$repeat` values, scripts), the corpus's 128 scenarios held 3 MB,
    most of what a loaded corpus keeps (bench/bench_memory.py)."""

    source: bytes
    file: Path | None = None

    def expand(self) -> LifecycleSpec:
        """The scenario to play, built again from the checked member (it expanded at load)."""
        return _spec(json.loads(zlib.decompress(self.source)), self.file)


def is_lifecycle(document: object) -> bool:
    return isinstance(document, dict) and MEMBER in document


def lifecycle_fixture(document: dict, file: Path | None = None) -> Fixture:
    """Check a lifecycle document against its schema and build the runnable Fixture."""
    problems = schema_problems(document, file, SCHEMA_FILE)
    if problems:
        raise FixtureError(problems)
    body = document[MEMBER]
    _spec(body, file)  # its macros expand: a mistake is the load's error, not the run's
    source = zlib.compress(json.dumps(body, ensure_ascii=False).encode("utf-8"), 6)
    return Fixture.from_document(document, file, lifecycle=CompactLifecycle(source, file))


def _spec(body: dict, file: Path | None) -> LifecycleSpec:
    """The scenario of a checked `lifecycle` member, its macros expanded."""
    try:
        return LifecycleSpec(
            function=body["function"],
            input=expand(body["input"], (MEMBER, "input")),  # type: ignore[arg-type]
            script=tuple(expand(body.get("script", []), (MEMBER, "script"))),  # type: ignore[arg-type]
            faults=tuple(body.get("faults", [])),
            expect=expand(body["expect"], (MEMBER, "expect")),  # type: ignore[arg-type]
            policy=body.get("policy"),
        )
    except MacroError as exc:
        raise FixtureError([FixtureProblem(file, exc.pointer, exc.message)]) from None
