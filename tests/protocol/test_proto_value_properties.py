"""Property tests of the value model: exact round trips, canonical stability, refusals."""

from __future__ import annotations

import copy
import io
import json
import math
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rfc8785 import _impl as jcs_impl

from fakepeer.protocol.canonical import canonical_bytes, hash_document
from fakepeer.protocol.values import (
    U64,
    BlobRef,
    ConversionError,
    Duration,
    Instant,
    canonical_value_size,
    format_f64,
    from_python,
    to_python,
    validate_value,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

I64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(max_size=12)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    I64,
    st.integers(0, 2**64 - 1).map(U64),
    st.integers(2**63, 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    st.binary(max_size=12),
    I64.map(Instant),
    I64.map(Duration),
    st.builds(
        BlobRef,
        st.text("0123456789abcdef", min_size=64, max_size=64),
        st.integers(0, 2**64 - 1),
        st.one_of(st.none(), st.text(min_size=1, max_size=8)),
    ),
)
PORTABLE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=16,
)


def _same(a: object, b: object) -> bool:
    """Exact equality: same types (U64 vs int, -0.0 vs 0.0), same values."""
    if type(a) is U64 and type(b) is int and b > 2**63 - 1:
        return a == b  # an int beyond i64 that fits u64 becomes u64 (§3.5)
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)  # type: ignore[arg-type]
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)  # type: ignore[union-attr,index]
    return a == b


@SETTINGS
@given(PORTABLE)
def test_python_values_round_trip_exactly(value: object) -> None:
    doc = from_python(value)
    validate_value(doc)
    back = to_python(doc)
    assert _same(back, value)
    assert canonical_bytes(from_python(back)) == canonical_bytes(doc)


@SETTINGS
@given(PORTABLE)
def test_documents_round_trip_and_sizes_are_canonical(value: object) -> None:
    doc = json.loads(json.dumps(from_python(value)))  # as a decoder would see it
    again = from_python(to_python(doc))
    assert canonical_bytes(again) == canonical_bytes(doc)
    assert canonical_value_size(doc) == len(canonical_bytes(doc))


def _shuffled(doc: object, rng: random.Random) -> object:
    if isinstance(doc, dict):
        items = list(doc.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(doc, list):
        return [_shuffled(item, rng) for item in doc]
    return doc


@SETTINGS
@given(PORTABLE, st.randoms(use_true_random=False))
def test_canonical_encoding_is_idempotent_and_order_independent(
    value: object, rng: random.Random
) -> None:
    doc = from_python(value)
    encoded = canonical_bytes(doc)
    assert canonical_bytes(json.loads(encoded)) == encoded
    shuffled = _shuffled(doc, rng)
    assert canonical_bytes(shuffled) == encoded
    assert hash_document(shuffled) == hash_document(doc)


def test_hashes_are_stable() -> None:
    doc = {"t": "object", "v": {"b": {"t": "i64", "v": "1"}, "a": {"t": "str", "v": "é"}}}
    assert canonical_bytes(doc) == (
        b'{"t":"object","v":{"a":{"t":"str","v":"\xc3\xa9"},"b":{"t":"i64","v":"1"}}}'
    )
    assert hash_document({}) == (
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_f64_text_matches_rfc8785_and_round_trips(value: float) -> None:
    text = format_f64(value)
    assert float(text) == value
    if value != 0:
        sink = io.BytesIO()
        jcs_impl._serialize_float(value, sink)
        assert sink.getvalue().decode() == text
    validate_value({"t": "f64", "v": text})


def _nodes(doc: dict, pointer: str = "") -> list[tuple[str, dict]]:
    """Every tagged value node with its pointer, in document order."""
    found = [(pointer, doc)]
    if doc["t"] == "array":
        for i, item in enumerate(doc["v"]):
            found += _nodes(item, f"{pointer}/v/{i}")
    elif doc["t"] == "object":
        for key, item in doc["v"].items():
            token = key.replace("~", "~0").replace("/", "~1")
            found += _nodes(item, f"{pointer}/v/{token}")
    return found


def _break(node: dict, how: int) -> None:
    """Make one node's own encoding invalid (children, if any, stay valid)."""
    tag = node["t"]
    if how in (0, 1):
        node["t"] = "nope"
    elif how == 2:
        if tag == "null":
            node["t"] = "Null"
        else:
            del node["v"]
    elif tag in ("i64", "u64", "instant", "duration"):
        node["v"] = "0" + node["v"] if node["v"] != "0" else "-0"
    elif tag == "f64":
        node["v"] = node["v"] + ".0" if "e" not in node["v"] and "." not in node["v"] else "x"
    elif tag in ("array", "object"):
        node["v"] = "not a container"
    elif tag == "bytes":
        node["v"] = node["v"] + "="
    elif tag == "blob":
        node["v"]["size"] = "-1"
    elif tag == "null":  # a v on null is an unknown member, ignored: break the tag instead
        node["t"] = "NULL"
    else:  # bool, str
        node["v"] = 1.5


@SETTINGS
@given(PORTABLE, st.data())
def test_out_of_domain_mutations_are_refused_at_the_mutated_value(
    value: object, data: st.DataObject
) -> None:
    doc = copy.deepcopy(from_python(value))
    nodes = _nodes(doc)
    index = data.draw(st.integers(0, len(nodes) - 1))
    pointer, node = nodes[index]
    _break(node, data.draw(st.integers(0, 3)))
    try:
        validate_value(doc, "/body/input")
    except ConversionError as error:
        assert error.category == "protocol.invalid_value"
        assert error.pointer == "/body/input" + pointer
    else:
        raise AssertionError(f"mutated document accepted: {doc!r}")
