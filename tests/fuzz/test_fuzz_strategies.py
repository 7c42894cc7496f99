"""The generators agree with the bench's protocol model (fakepeer.protocol.values) on every case.

Portable documents must validate; each malformed one must be refused with exactly the category
and pointer its generator planted. A disagreement is a bug in the generator or in the model.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fakepeer.fuzz.strategies import FuzzCase, depth, malformed_cases, portable_cases
from fakepeer.protocol.limits import MAX_DEPTH
from fakepeer.protocol.values import ConversionError, validate_value

SETTINGS = settings(
    max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


@SETTINGS
@given(portable_cases())
def test_portable_cases_are_valid_values(case: FuzzCase) -> None:
    validate_value(case.doc, "/body/input")
    assert depth(case.doc) <= MAX_DEPTH


@SETTINGS
@given(malformed_cases())
def test_malformed_cases_are_refused_where_planted(case: FuzzCase) -> None:
    try:
        validate_value(case.doc, "/body/input")
    except ConversionError as refusal:
        assert (refusal.category, refusal.pointer) == (
            case.category,
            "/body/input" + case.pointer,
        ), case.defect
    else:
        raise AssertionError(f"the protocol model accepts a malformed value: {case.defect}")
