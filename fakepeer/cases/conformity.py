"""Fixtures against the protocol: every send and expect must be a message the protocol allows.

Without this check a fixture mistake (an expect with `"timeout_ms": 7200000`, a number where §6
has a decimal string) validates and is then blamed on every SDK. An expect is checked with its
`vary` and `derive` pointers left out (they name members the fixture does not fix). A send may
break its schema only on purpose: the next expect must then report a `protocol.*` error whose
`details.pointer` names the fault, as every malformed-input fixture does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fakepeer.cases.errors import FixtureProblem
from fakepeer.cases.model import ExpectStep, Fixture, SendStep, Step
from fakepeer.protocol.encode import envelope as make_envelope
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.pointer import VaryPattern, join, split

_REQUIRED = re.compile(r"^'(.*)' is a required property$")


def message_problems(fixture: Fixture, file: Path | None = None) -> list[FixtureProblem]:
    """Each send and expect that its kind's schema or the tagged value model (§3) refuses."""
    from fakepeer.protocol.schema import validate_message

    problems = []
    steps = fixture.steps
    for index, step in enumerate(steps):
        if isinstance(step, SendStep):
            kind, member, envelope = step.envelope.get("kind"), "send", step.envelope
            excused: list = []
            fault = _deliberate_fault(steps[index + 1 :])
        elif isinstance(step, ExpectStep):
            kind, member, fault = step.kind, "expect", None
            envelope = make_envelope(kind, step.body, "x")
            excused = [VaryPattern(p) for p in (*step.vary, *(p for p, _ in step.derive))]
        else:
            continue
        if kind not in KINDS:
            continue  # `fixtures validate` names the unknown or wrong-way kind
        for violation in validate_message(envelope):
            if _is_excused(violation.pointer, violation.message, excused):
                continue
            if fault is not None and _related(violation.pointer, fault):
                continue
            problems.append(
                FixtureProblem(
                    file,
                    f"/steps/{index}/{member}{violation.pointer}",
                    f"{violation.message}; rule: the `{kind}` message of docs/protocol.md "
                    f"§{KINDS[kind].section} (fakepeer/protocol/schemas/{kind}.schema.json)"
                    + (_SEND_HINT if member == "send" else _EXPECT_HINT),
                )
            )
    return problems


_SEND_HINT = (
    "; a deliberately broken send must be answered by the next expect with a protocol.* "
    "error whose details.pointer names the fault"
)
_EXPECT_HINT = "; no SDK could send this (list members that may differ in `vary`)"


def _deliberate_fault(rest: Sequence[Step]) -> str | None:
    """The `details.pointer` of the next expect when it reports a `protocol.*` error."""
    for step in rest:
        if isinstance(step, ExpectStep):
            error = step.body.get("error") if isinstance(step.body, dict) else None
            if not isinstance(error, dict):
                return None
            category, details = error.get("category"), error.get("details")
            if isinstance(category, str) and category.startswith("protocol."):
                pointer = details.get("pointer") if isinstance(details, dict) else None
                return pointer if isinstance(pointer, str) else None
            return None
    return None


def _related(violation: str, fault: str) -> bool:
    """The fault is the violation's place, inside it, or encloses it."""
    return (
        violation == fault or fault.startswith(violation + "/") or violation.startswith(fault + "/")
    )


def _is_excused(pointer: str, message: str, patterns: list) -> bool:
    """True when a `vary`/`derive` pointer covers the place (or the missing member) at fault."""
    if not patterns:
        return False
    path = split(pointer)
    missing = _REQUIRED.match(message)
    candidates = [path[:end] for end in range(len(path) + 1)]
    if missing:
        candidates.append([*path, missing.group(1)])
    return any(pattern.matches(candidate) for pattern in patterns for candidate in candidates)


def same_as_problems(steps: list[Step], file: Path | None) -> list[FixtureProblem]:
    """A `same_as` names an earlier expect step, and its pointer is varied (the value is the
    SDK's own, compared only with that earlier answer)."""

    problems = []
    for index, step in enumerate(steps):
        if not isinstance(step, ExpectStep):
            continue
        for pointer, number, _earlier in step.same_as:
            where = join(("steps", index, "same_as", pointer))
            if not (1 <= number <= index and isinstance(steps[number - 1], ExpectStep)):
                problems.append(
                    FixtureProblem(
                        file, f"{where}/step", f"step {number} is no earlier expect step"
                    )
                )
            elif not _is_excused(pointer, "", [VaryPattern(p) for p in step.vary]):
                problems.append(
                    FixtureProblem(
                        file, where, f"{pointer} is compared with an earlier answer: vary it too"
                    )
                )
    return problems
