"""The fixture JSON Schemas (fixture.schema.json, lifecycle.schema.json): cached validators and
readable errors."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from fakepeer.cases.errors import FixtureProblem
from fakepeer.protocol.pointer import join

if TYPE_CHECKING:  # jsonschema is imported when a schema is checked: a cached load needs none
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

SCHEMA_FILE = "fixture.schema.json"
_STEP_KINDS = "a step has exactly one of send, send_raw, send_raw_base64, expect"


@cache
def packaged_schema(name: str) -> dict:
    """A schema document shipped in `fakepeer/cases` (`name`: its file name)."""
    return json.loads(resources.files("fakepeer.cases").joinpath(name).read_text("utf-8"))


def fixture_schema() -> dict:
    """The fixture schema document."""
    return packaged_schema(SCHEMA_FILE)


@cache
def _validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(packaged_schema(name))


def schema_problems(
    document: object, file: Path | None, schema: str = SCHEMA_FILE
) -> list[FixtureProblem]:
    """Every violation of the `schema` file by one fixture document, deepest cause first, in
    document order."""
    from jsonschema.exceptions import best_match

    problems = []
    for error in _validator(schema).iter_errors(document):
        cause = best_match([error, *error.context]) if error.context else error
        problems.append(FixtureProblem(file, join(cause.absolute_path), _explain(cause)))
    problems.sort(key=lambda problem: problem.pointer)
    return problems


def _explain(error: ValidationError) -> str:
    if "no_step_kind" in "/".join(str(part) for part in error.absolute_schema_path) or (
        error.validator == "required" and error.schema.get("description", "").startswith("A step")
    ):
        keys = ", ".join(sorted(error.instance)) if isinstance(error.instance, dict) else ""
        return f"{_STEP_KINDS}; found {keys or 'nothing'}"
    if error.validator == "pattern":
        return f"{error.instance!r} does not match the pattern {error.validator_value!r}"
    if error.validator == "enum":
        choices = ", ".join(json.dumps(value) for value in error.validator_value)
        return f"{json.dumps(error.instance)} is not one of {choices}"
    return error.message
