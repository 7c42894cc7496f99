"""The fast value test in `validate_message` never accepts what `validate_value` refuses."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings

from fakepeer.fuzz.strategies import (
    FuzzCase,
    curated_malformed,
    curated_portable,
    malformed_cases,
    portable_values,
)
from fakepeer.protocol import fastpath
from fakepeer.protocol.limits import MAX_DEPTH, MAX_VALUE_BYTES
from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.schema import validate_message
from fakepeer.protocol.values import ConversionError, validate_value

surely_valid = fastpath.surely_valid_value


def _valid(doc: object) -> bool:
    try:
        validate_value(doc)
    except ConversionError:
        return False
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(portable_values())
def test_fast_yes_implies_valid_on_portable_values(doc: object) -> None:
    assert _valid(doc)
    if surely_valid(doc):
        return
    # Only blobs and values near the size limit may be left to the full check.
    text = repr(doc)
    assert "'blob'" in text or len(text) > MAX_VALUE_BYTES // 2, text[:300]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(malformed_cases())
def test_fast_check_refuses_every_malformed_value(case: FuzzCase) -> None:
    assert not _valid(case.doc)
    assert not surely_valid(case.doc), case.defect


@pytest.mark.parametrize("case", curated_malformed(), ids=lambda case: case.defect)
def test_fast_check_refuses_curated_defects(case: FuzzCase) -> None:
    assert not surely_valid(case.doc)


def test_fast_check_accepts_curated_values_other_than_blobs() -> None:
    for case in curated_portable():
        assert surely_valid(case.doc) == (case.doc["t"] != "blob"), case.doc


@pytest.mark.parametrize(
    "doc",
    [
        {"t": "str", "v": 1},
        {"t": "bool", "v": 1},
        {"t": "bool", "v": "true"},
        {"t": "i64", "v": 1},
        {"t": "f64", "v": 1.5},
        {"t": "f64", "v": "1.50"},
        {"t": "u64", "v": "-1"},
        {"t": "object", "v": {"k": 1}},
        {"t": "object", "v": []},
        {"t": "array", "v": {}},
        {"t": "str"},
        {"v": "x"},
        ["not", "an", "object"],
    ],
)
def test_fast_check_refuses_wrong_types(doc: object) -> None:
    assert not surely_valid(doc)
    assert not _valid(doc)


def test_depth_limit_is_exact() -> None:
    doc: object = {"t": "null"}
    for _ in range(MAX_DEPTH - 1):
        doc = {"t": "array", "v": [doc]}
    assert surely_valid(doc) and _valid(doc)
    deeper = {"t": "array", "v": [doc]}
    assert not surely_valid(deeper) and not _valid(deeper)


def test_size_bound_leaves_large_values_to_the_full_check() -> None:
    text = "é" * (MAX_VALUE_BYTES // 4)  # 512 KiB of UTF-8: valid, but over the bound
    doc = {"t": "str", "v": text}
    assert _valid(doc)
    assert not surely_valid(doc)
    assert validate_message(_completed(doc)) == []


def _completed(value: object) -> dict:
    envelope = copy.deepcopy(KINDS["completed"].example)
    envelope["body"]["value"] = value
    return envelope


def test_validate_message_still_reports_value_rules() -> None:
    violations = validate_message(_completed({"t": "f64", "v": "1e+2"}))
    assert [v.pointer for v in violations] == ["/body/value"]
    assert violations[0].message.startswith("protocol.invalid_value")
