"""Lifecycle scenarios: whole runs as data (docs/fixtures.md "Lifecycle scenarios").

A lifecycle fixture names a function and its input, a script of events and environment changes at
virtual times, faults, and the expected outcome. It is loaded like any fixture (same id, rule,
level and capabilities; shown in matrix.json and coverage) and played by the model server
(`fakepeer.server`), not as a list of exchanges.
"""

from __future__ import annotations

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


def is_lifecycle(document: object) -> bool:
    return isinstance(document, dict) and MEMBER in document


def lifecycle_fixture(document: dict, file: Path | None = None) -> Fixture:
    """Check a lifecycle document against its schema and build the runnable Fixture."""
    problems = schema_problems(document, file, SCHEMA_FILE)
    if problems:
        raise FixtureError(problems)
    body = document[MEMBER]
    try:
        spec = LifecycleSpec(
            function=body["function"],
            input=expand(body["input"], (MEMBER, "input")),  # type: ignore[arg-type]
            script=tuple(expand(body.get("script", []), (MEMBER, "script"))),  # type: ignore[arg-type]
            faults=tuple(body.get("faults", [])),
            expect=expand(body["expect"], (MEMBER, "expect")),  # type: ignore[arg-type]
            policy=body.get("policy"),
        )
    except MacroError as exc:
        raise FixtureError([FixtureProblem(file, exc.pointer, exc.message)]) from None
    return Fixture.from_document(document, file, lifecycle=spec)
