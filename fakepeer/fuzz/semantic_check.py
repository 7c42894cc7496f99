"""What a correct SDK does with one semantic case: the oracle's answer and effect trace."""

from __future__ import annotations

from fakepeer.fuzz.programs import SemanticCase
from fakepeer.fuzz.semantic_session import Played
from fakepeer.oracle import Ambient, Expectation, answer_difference, expect_invoke, trace_difference
from fakepeer.protocol.schema import validate_message


def expectation_of(case: SemanticCase, request_id: str = "") -> Expectation:
    """The oracle's expectation (raises Unmodeled when the oracle does not decide the case)."""
    ambient = Ambient(dict(case.ambient), case.admission)
    return expect_invoke(case.body, request_id, ambient)


def disagreement(case: SemanticCase, played: Played) -> str | None:
    """None when the SDK did what the oracle says, else one line saying what differs."""
    if played.answer is None:
        return f"the SDK broke: {played.broken}"
    expectation = expectation_of(case, played.request_id)
    violations = validate_message(played.answer)
    if violations:
        return f"the {played.answer.get('kind')!r} answer violates its schema: {violations[0]}"
    found = answer_difference(expectation, played.answer.get("kind"), played.answer.get("body"))
    if found is not None:
        return f"answer {found} (the oracle expects {expectation.kind}: {expectation.why})"
    if played.trace is None:
        return f"no effect trace: {played.broken}"
    found = trace_difference(expectation.trace, played.trace)
    if found is not None:
        return f"effect {found} (the oracle expects {expectation.kind}: {expectation.why})"
    return None
