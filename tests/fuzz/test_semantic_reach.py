"""The semantic generator reaches the cases the mutant campaign needed (SEMANTIC_HUNT.md misses)."""

from __future__ import annotations

import json
import random

from fakepeer.fuzz.programs import CASE_BYTES, build_case


def _drawn(count: int = 4000) -> list[str]:
    rng = random.Random(26)
    return [
        json.dumps(build_case(rng.randbytes(CASE_BYTES)).body, ensure_ascii=False)
        for _ in range(count)
    ]


def test_the_generator_reaches_each_input_a_miss_needed() -> None:
    texts = _drawn()
    wanted = {
        "a typed 0 child timeout": '"timeout": {"t": "i64", "v": "0"}',
        "an empty thrown message": '"throw": {"t": "str", "v": ""}',
        "a negative zero in an emitted JSON document": "-0.0",
        "an unknown member of a tagged value": '"note": "ignored"',
        "an unknown body member": '"x_extension"',
    }
    missing = [what for what, needle in wanted.items() if not any(needle in t for t in texts)]
    assert missing == []
