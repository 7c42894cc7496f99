"""Exact structural reductions of a counterexample: after hypothesis, or instead of it.

Why: hypothesis cannot shrink inside a constant (the all-edges array) nor a document of the
seeded generator, and a fixture is most useful when it holds the one value the SDK gets wrong.
Any subtree of a portable value is portable, so trying subtrees and single deletions keeps the
property meaningful. A malformed value keeps its one defect: only the containers around it and
their other members are taken away, and its pointer follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from fakepeer.fuzz.strategies import INVALID_VALUE, Doc, FuzzCase
from fakepeer.protocol.values import escape_pointer_token

MAX_ATTEMPTS = 500

T = TypeVar("T")


def candidates(doc: Doc) -> Iterator[Doc]:
    """Smaller portable documents: each child alone, then the container minus one element."""
    tag, payload = doc.get("t"), doc.get("v")
    if tag == "array":
        yield from payload
        for index in range(len(payload)):
            yield {"t": "array", "v": payload[:index] + payload[index + 1 :]}
    elif tag == "object":
        yield from payload.values()
        for key in payload:
            yield {"t": "object", "v": {k: v for k, v in payload.items() if k != key}}


def _greedy(
    item: T,
    problem: str | None,
    candidates_of: Callable[[T], Iterable[T]],
    problem_of: Callable[[T], str | None],
) -> tuple[T, str | None]:
    """Replace `item` by its first still-failing candidate until none fails, within
    MAX_ATTEMPTS candidates in all; (item, problem)."""
    attempts = 0
    progress = problem is not None
    while progress and attempts < MAX_ATTEMPTS:
        progress = False
        for candidate in candidates_of(item):
            attempts += 1
            found = problem_of(candidate)
            if found is not None:
                item, problem, progress = candidate, found, True
                break
            if attempts >= MAX_ATTEMPTS:
                break
    return item, problem


def reduce_portable(doc: Doc, problem_of: Callable[[Doc], str | None]) -> tuple[Doc, str | None]:
    """Greedily replace `doc` by a smaller failing candidate until none fails; (doc, problem)."""
    return _greedy(doc, problem_of(doc), candidates, problem_of)


def _tokens(pointer: str) -> list[str]:
    parts = pointer.split("/")[1:]
    return [part.replace("~1", "/").replace("~0", "~") for part in parts]


def malformed_candidates(case: FuzzCase) -> Iterator[FuzzCase]:
    """Smaller documents with the same single defect: the outermost container's member on the
    defect's path alone, then that container without one of its other members.

    Only an `invalid_value` defect is moved (a depth or size defect depends on its containers);
    the member itself stays a JSON object (else it is a message-level type error, §2 step 5).
    """
    tokens = _tokens(case.pointer)
    if case.category != INVALID_VALUE or len(tokens) < 2 or tokens[0] != "v":
        return
    tag, payload, key = case.doc.get("t"), case.doc.get("v"), tokens[1]
    rest = case.pointer[len("/v/" + escape_pointer_token(key)) :]
    if tag == "array":
        index = int(key)
        child = payload[index]
        if rest or isinstance(child, dict):
            yield FuzzCase(child, case.category, rest, case.defect)
        for other in range(len(payload)):
            if other != index:
                items = payload[:other] + payload[other + 1 :]
                where = index - (other < index)
                doc = {"t": "array", "v": items}
                yield FuzzCase(doc, case.category, f"/v/{where}{rest}", case.defect)
    elif tag == "object":
        child = payload[key]
        if rest or isinstance(child, dict):
            yield FuzzCase(child, case.category, rest, case.defect)
        for other in payload:
            if other != key:
                members = {k: v for k, v in payload.items() if k != other}
                yield FuzzCase({"t": "object", "v": members}, case.category, case.pointer,
                               case.defect)  # fmt: skip


def reduce_malformed(
    case: FuzzCase, problem: str, problem_of: Callable[[FuzzCase], str | None]
) -> tuple[FuzzCase, str]:
    """Greedily replace `case` by a smaller still-failing one until none fails; (case, problem)."""
    reduced, found = _greedy(case, problem, malformed_candidates, problem_of)
    assert found is not None  # `problem` is not None and only a failing candidate replaces it
    return reduced, found
