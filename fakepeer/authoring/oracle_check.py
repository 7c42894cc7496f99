"""The oracle checks the corpus: every exchange fixture's invoke of a registry function is
recomputed from the text (fakepeer/oracle), so a mistake in a hand-written expectation is
caught before an SDK is blamed. Two independent readings of one text must agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fakepeer.cases import ExpectStep, Fixture, FixtureProblem, SendStep
from fakepeer.oracle import Ambient, Unmodeled, answer_difference, expect_invoke, trace_difference
from fakepeer.oracle.registry import FUNCTIONS
from fakepeer.protocol.schema import validate_message

#: Invokes larger than this, or with this many history entries, meet §4.3 limits: the
#: envelope fixtures' business, not the oracle's.
MAX_MODELLED_BYTES = 256 * 1024
MAX_MODELLED_HISTORY = 1000


@dataclass
class OracleCheck:
    """What the oracle decided over a set of fixtures."""

    invokes: int = 0  # invokes of a registry function
    modelled: int = 0  # of which the oracle decided
    fixtures: set[str] = field(default_factory=set)  # fixtures with at least one decided invoke
    problems: list[FixtureProblem] = field(default_factory=list)
    unmodelled: dict[str, int] = field(default_factory=dict)  # reason -> count


def check_fixture(fixture: Fixture, result: OracleCheck) -> None:
    """Recompute every invoke of `fixture` the oracle models; add disagreements to `result`."""
    if fixture.lifecycle is not None:
        return
    ambient = Ambient()
    steps = fixture.steps
    for index, step in enumerate(steps):
        if not isinstance(step, SendStep):
            continue
        kind, body = step.envelope.get("kind"), step.envelope.get("body")
        if not isinstance(body, dict) or _refused_over_http(steps, index):
            continue
        if kind == "conform.reset":
            ambient = Ambient()
        elif kind == "conform.set_ambient":
            if isinstance(body.get("key"), str) and isinstance(body.get("value"), str):
                ambient.values[body["key"]] = body["value"]
        elif kind == "conform.set_admission":
            if isinstance(body.get("open"), bool):
                ambient.admission = body["open"]
        elif kind == "invoke" and body.get("function_id") in FUNCTIONS:
            answer = steps[index + 1] if index + 1 < len(steps) else None
            if isinstance(answer, ExpectStep):
                result.invokes += 1
                _check_invoke(fixture, index, step, answer, ambient, result)


def _refused_over_http(steps: tuple, index: int) -> bool:
    """A send with an HTTP fault that the endpoint refuses (the next expect is a protocol_error):
    it changes nothing (D-HTTP-AUTH), so a refused conform.set_admission closes nothing."""
    answer = steps[index + 1] if index + 1 < len(steps) else None
    return (
        getattr(steps[index].payload, "fault", None) is not None
        and isinstance(answer, ExpectStep)
        and answer.kind == "protocol_error"
    )


def _check_invoke(
    fixture: Fixture,
    index: int,
    step: SendStep,
    answer: ExpectStep,
    ambient: Ambient,
    result: OracleCheck,
) -> None:
    try:
        if getattr(step.payload, "fault", None) is not None:
            raise Unmodeled("an HTTP fault (the transport's business, docs/protocol.md §1.1)")
        if (
            not re.fullmatch(r"1\.(0|[1-9][0-9]*)", str(step.envelope.get("version")))
            or validate_message(step.envelope)
            or len(step.payload) > MAX_MODELLED_BYTES
            or len(step.envelope["body"].get("history", [])) > MAX_MODELLED_HISTORY
        ):
            raise Unmodeled("a malformed or over-limit invoke (the envelope fixtures' business)")
        expectation = expect_invoke(step.envelope["body"], step.exchange_id, ambient)
    except Unmodeled as exc:
        reason = str(exc)
        result.unmodelled[reason] = result.unmodelled.get(reason, 0) + 1
        return
    result.modelled += 1
    result.fixtures.add(fixture.id)
    pointer = f"/steps/{index + 1}"
    found = answer_difference(expectation, answer.kind, answer.body, answer.vary)
    if found is None and answer.trace is not None:
        found = _trace_disagreement(expectation.trace, answer.trace)
        pointer += "/trace"
    if found is not None:
        message = (
            f"the oracle disagrees with {fixture.id} at step {index + 1} "
            f"(it expects {expectation.kind}: {expectation.why}): {found}"
        )
        result.problems.append(FixtureProblem(fixture.path, pointer, message))


def _trace_disagreement(oracle_events: tuple[dict, ...], stated: object) -> str | None:
    if stated.after_reset:  # type: ignore[attr-defined]
        oracle_events = ()  # asked after conform.reset, which clears the trace (§12.4)
    only = set(stated.only)  # type: ignore[attr-defined]
    wanted = [e for e in oracle_events if not only or e.get("event") in only]
    events = list(stated.events)  # type: ignore[attr-defined]
    if stated.match == "members":  # type: ignore[attr-defined]
        wanted = [
            {key: event.get(key) for key in stated_event}
            for event, stated_event in zip(wanted, events, strict=False)
        ] + wanted[len(events) :]
    return trace_difference(wanted, events)


def check_fixtures(fixtures: list[Fixture]) -> OracleCheck:
    """Run the oracle over every fixture."""
    result = OracleCheck()
    for fixture in fixtures:
        check_fixture(fixture, result)
    return result
