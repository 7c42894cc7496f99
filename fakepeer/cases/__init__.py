"""Fixtures: loading, checking, macros, exchange ids, selection and a Python scenario API."""

from fakepeer.cases.errors import FixtureError, FixtureProblem
from fakepeer.cases.loader import (
    default_fixture_dir,
    fixture_files,
    fixture_from_document,
    load_fixture_file,
    load_fixtures,
    repository_root,
)
from fakepeer.cases.macros import MacroError, expand
from fakepeer.cases.model import ExpectStep, Fixture, RawSendStep, Rule, SendStep, Step
from fakepeer.cases.scenario import Scenario
from fakepeer.cases.schema import fixture_schema, schema_problems
from fakepeer.cases.selection import Shard, select

__all__ = [
    "ExpectStep",
    "Fixture",
    "FixtureError",
    "FixtureProblem",
    "MacroError",
    "RawSendStep",
    "Rule",
    "Scenario",
    "SendStep",
    "Shard",
    "Step",
    "default_fixture_dir",
    "expand",
    "fixture_files",
    "fixture_from_document",
    "fixture_schema",
    "load_fixture_file",
    "load_fixtures",
    "repository_root",
    "schema_problems",
    "select",
]
