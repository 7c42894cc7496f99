"""The seeded bulk generator: valid where portable, refused where planted, reproducible, and
reducing a counterexample keeps its one defect."""

from __future__ import annotations

from fakepeer.fuzz.generator import generate
from fakepeer.fuzz.reduce import malformed_candidates, reduce_malformed
from fakepeer.fuzz.strategies import INVALID_VALUE, FuzzCase, depth
from fakepeer.protocol.limits import MAX_DEPTH
from fakepeer.protocol.values import ConversionError, validate_value

COUNT = 1500


def _refusal(case: FuzzCase) -> tuple[str, str] | None:
    try:
        validate_value(case.doc, "/body/input")
    except ConversionError as refusal:
        return refusal.category, refusal.pointer
    return None


def test_portable_documents_are_valid_values() -> None:
    for seed in (1, 2):
        for case in generate(seed, "round-trip", COUNT):
            assert case.portable
            validate_value(case.doc, "/body/input")
            assert depth(case.doc) <= MAX_DEPTH


def test_malformed_documents_are_refused_where_planted() -> None:
    for seed in (1, 2):
        for case in generate(seed, "refusal", COUNT):
            assert _refusal(case) == (case.category, "/body/input" + case.pointer), case.defect


def test_the_same_seed_gives_the_same_documents_and_another_seed_others() -> None:
    first = [c.doc for c in generate(7, "refusal", 200)]
    assert first == [c.doc for c in generate(7, "refusal", 200)]
    assert first != [c.doc for c in generate(8, "refusal", 200)]
    assert [c.doc for c in generate(7, "round-trip", 50)] != first[:50]


def test_every_tag_and_every_defect_kind_is_generated() -> None:
    tags: set[str] = set()

    def walk(doc: dict) -> None:
        tags.add(doc["t"])
        if doc["t"] == "array":
            for item in doc["v"]:
                walk(item)
        elif doc["t"] == "object":
            for item in doc["v"].values():
                walk(item)

    for case in generate(3, "round-trip", COUNT):
        walk(case.doc)
    assert tags == {"null", "bool", "i64", "u64", "f64", "str", "bytes", "instant", "duration",
                    "blob", "array", "object"}  # fmt: skip
    defects = {case.defect.split(" levels")[0].isdigit() or case.defect
               for case in generate(3, "refusal", 4 * COUNT)}  # fmt: skip
    assert len(defects) >= 13, defects  # 12 leaf kinds, too deep (True), too large


def test_malformed_reduction_keeps_the_defect_and_its_pointer() -> None:
    cases = [c for c in generate(4, "refusal", 400) if c.category == INVALID_VALUE and c.pointer]
    assert cases
    for case in cases[:60]:
        for smaller in malformed_candidates(case):
            assert _refusal(smaller) == (smaller.category, "/body/input" + smaller.pointer)
        # an SDK that refuses nothing: every candidate still fails, so it reduces to the leaf
        reduced, _ = reduce_malformed(case, "accepted", lambda c: "accepted")
        assert _refusal(reduced) == (reduced.category, "/body/input" + reduced.pointer)
        # the leaf alone, or (a non-object leaf: §2 step 5) inside one one-member container
        assert reduced.pointer.count("/") <= 2
        if reduced.pointer:
            assert len(reduced.doc["v"]) == 1 and not isinstance(next(iter(
                reduced.doc["v"].values() if isinstance(reduced.doc["v"], dict)
                else reduced.doc["v"])), dict)  # fmt: skip
