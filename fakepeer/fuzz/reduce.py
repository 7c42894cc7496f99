"""A last, structural reduction of a portable counterexample after hypothesis has shrunk it.

Why: hypothesis cannot shrink inside a constant (the all-edges array), and a fixture is most
useful when it holds the one value the SDK gets wrong. Any subtree of a portable value is
portable, so trying subtrees and single deletions keeps the property meaningful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fakepeer.fuzz.strategies import Doc

MAX_ATTEMPTS = 500


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


def reduce_portable(doc: Doc, problem_of: Callable[[Doc], str | None]) -> tuple[Doc, str | None]:
    """Greedily replace `doc` by a smaller failing candidate until none fails; (doc, problem)."""
    problem = problem_of(doc)
    attempts = 0
    progress = problem is not None
    while progress and attempts < MAX_ATTEMPTS:
        progress = False
        for candidate in candidates(doc):
            attempts += 1
            found = problem_of(candidate)
            if found is not None:
                doc, problem, progress = candidate, found, True
                break
            if attempts >= MAX_ATTEMPTS:
                break
    return doc, problem
