"""Hypothesis strategies for tagged values (§3): portable ones, and malformed ones with one defect.

Why by construction: a malformed document carries the category and the JSON pointer (relative
to the value's root) that the §3.4 refusal must name, because the generator knows exactly where
it planted its single defect. The protocol model is a second opinion (see `FuzzCase`), not the
source of truth, so a bug in either shows up as a disagreement.

Object keys never start with `$`, so every generated document can be written into a fixture
without being mistaken for a fixture macro.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from fakepeer.protocol.limits import I64_MAX, I64_MIN, MAX_DEPTH, MAX_VALUE_BYTES, U64_MAX
from fakepeer.protocol.values import escape_pointer_token, format_f64

INVALID_VALUE = "protocol.invalid_value"
LIMIT_EXCEEDED = "protocol.limit_exceeded"

Doc = Any


@dataclass(frozen=True)
class FuzzCase:
    """One document to echo: portable (must come back exactly) or malformed (must be refused)."""

    doc: Doc
    category: str | None = None  # None: portable
    pointer: str = ""  # relative to the value's root; meaningful when malformed
    defect: str = ""  # what is wrong, for people

    @property
    def portable(self) -> bool:
        return self.category is None


# --------------------------------------------------------------------------- portable values

_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

_TEXT_CHARS = st.characters(exclude_categories=("Cs",))
_SPECIAL_TEXT = [
    "",
    "naïve ☃",
    "😀",
    "\U0010ffff",
    "\U0001d11e clef",
    "\x00",
    "\u2028\u2029",
    "\ufeff",
    '"\\/\b\f\n\r\t',
    "e\u0301 vs \u00e9",
    "\uffff\ufffe",
]
_EDGE_INTS = [0, 1, -1, 2**31 - 1, 2**31, 2**32, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1]
_EDGE_FLOATS = [
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    1e21,
    1e-7,
    1e-6,
    123456789012345680000.0,
    0.1,
    1.0,
    -1.5,
    2.0**53,
    2.0**53 + 2,
]


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [n for n in (*_EDGE_INTS, low, high, low + 1, high - 1) if low <= n <= high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


def _number(tag: str, low: int, high: int) -> st.SearchStrategy[Doc]:
    return _integers(low, high).map(lambda n: {"t": tag, "v": str(n)})


def _f64() -> st.SearchStrategy[Doc]:
    floats = st.one_of(
        st.sampled_from(_EDGE_FLOATS), st.floats(allow_nan=False, allow_infinity=False)
    )
    return floats.map(lambda x: {"t": "f64", "v": format_f64(x)})


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _blob() -> st.SearchStrategy[Doc]:
    def build(digest: bytes, size: int, media: str | None) -> Doc:
        payload = {"sha256": digest.hex(), "size": str(size)}
        if media is not None:
            payload["media_type"] = media
        return {"t": "blob", "v": payload}

    media = st.none() | st.text(_TEXT_CHARS, min_size=1, max_size=12)
    return st.builds(build, st.binary(min_size=32, max_size=32), _integers(0, U64_MAX), media)


def _edge_docs() -> list[Doc]:
    """The values SDKs most often get wrong, each as a tagged document."""
    docs: list[Doc] = [{"t": "null"}, {"t": "bool", "v": False}]
    for tag, (low, high) in _INT_RANGES.items():
        docs += [{"t": tag, "v": str(n)} for n in (low, high, 0, 1, 2**53 + 1) if low <= n <= high]
    docs += [{"t": "f64", "v": format_f64(x)} for x in _EDGE_FLOATS]
    docs += [{"t": "str", "v": text} for text in _SPECIAL_TEXT]
    docs += [{"t": "bytes", "v": _b64(data)} for data in (b"", bytes(range(256)), b"\xff\xfe")]
    docs += [
        {"t": "array", "v": []},
        {"t": "object", "v": {}},
        {"t": "object", "v": {"a": {"t": "null"}, "b": {"t": "str", "v": ""}}},
        {"t": "instant", "v": "-1"},
        {"t": "blob", "v": {"sha256": _SHA, "size": "0"}},
        {"t": "blob", "v": {"sha256": _SHA, "size": str(U64_MAX), "media_type": "text/plain"}},
    ]
    return docs


_INT_RANGES = {"i64": (I64_MIN, I64_MAX), "u64": (0, U64_MAX), "instant": (I64_MIN, I64_MAX),
               "duration": (I64_MIN, I64_MAX)}  # fmt: skip


def scalars() -> st.SearchStrategy[Doc]:
    """Every non-container tag; half of the draws are edge values (see `_edge_docs`)."""
    regular = st.one_of(
        st.just({"t": "null"}),
        st.booleans().map(lambda b: {"t": "bool", "v": b}),
        _number("i64", I64_MIN, I64_MAX),
        _number("u64", 0, U64_MAX),
        _f64(),
        st.one_of(st.sampled_from(_SPECIAL_TEXT), st.text(_TEXT_CHARS, max_size=24)).map(
            lambda s: {"t": "str", "v": s}
        ),
        st.one_of(st.just(bytes(range(256))), st.binary(max_size=48)).map(
            lambda b: {"t": "bytes", "v": _b64(b)}
        ),
        _number("instant", I64_MIN, I64_MAX),
        _number("duration", I64_MIN, I64_MAX),
        _blob(),
    )
    return st.one_of(st.sampled_from(_edge_docs()), regular)


def keys() -> st.SearchStrategy[str]:
    """Object keys: any valid Unicode (astral included) except a leading `$`."""
    text = st.one_of(st.sampled_from(_SPECIAL_TEXT), st.text(_TEXT_CHARS, max_size=8))
    return text.filter(lambda key: not key.startswith("$"))


def _containers(children: st.SearchStrategy[Doc]) -> st.SearchStrategy[Doc]:
    return st.one_of(
        st.lists(children, max_size=4).map(lambda items: {"t": "array", "v": items}),
        st.dictionaries(keys(), children, max_size=4).map(lambda m: {"t": "object", "v": m}),
    )


def small_values() -> st.SearchStrategy[Doc]:
    """Mixed trees of every tag, a few levels deep."""
    return st.recursive(scalars(), _containers, max_leaves=16)


def depth(doc: Doc) -> int:
    """§4.3 depth of a valid tagged value."""
    if doc.get("t") == "array":
        return 1 + max((depth(item) for item in doc["v"]), default=0)
    if doc.get("t") == "object":
        return 1 + max((depth(item) for item in doc["v"].values()), default=0)
    return 1


Level = str | None  # a wrapping container: None is a one-element array, a str an object key


def wrap(doc: Doc, levels: list[Level]) -> Doc:
    """Nest `doc` inside one container per entry of `levels`, outermost first."""
    for key in reversed(levels):
        doc = {"t": "array", "v": [doc]} if key is None else {"t": "object", "v": {key: doc}}
    return doc


def levels() -> st.SearchStrategy[Level]:
    return st.one_of(st.none(), keys())


def _deep_values() -> st.SearchStrategy[Doc]:
    """Values nested up to exactly the depth limit (64), never beyond."""

    def build(inner: Doc, chain: list[Level]) -> Doc:
        room = MAX_DEPTH - depth(inner)
        return wrap(inner, chain[: max(0, room)])

    return st.builds(build, small_values(), st.lists(levels(), min_size=1, max_size=MAX_DEPTH))


#: The largest byte string whose value `{"t":"bytes","v":"..."}` is exactly at the 1 MiB limit.
MAX_PORTABLE_BYTES = (MAX_VALUE_BYTES - len('{"t":"bytes","v":""}')) // 4 * 3


def _big_values() -> st.SearchStrategy[Doc]:
    """A bytes value near the size limit (cheap to build: one repeated byte)."""
    sizes = st.one_of(
        st.just(MAX_PORTABLE_BYTES), st.integers(MAX_PORTABLE_BYTES - 64, MAX_PORTABLE_BYTES)
    )
    return st.builds(
        lambda size, byte: {"t": "bytes", "v": _b64(bytes([byte]) * size)},
        sizes,
        st.integers(0, 255),
    )


def _edge_arrays() -> st.SearchStrategy[Doc]:
    """Arrays of edge values: one bad edge anywhere fails, and shrinking isolates it."""
    edges = _edge_docs()
    return st.one_of(
        st.just({"t": "array", "v": edges}),
        st.lists(st.sampled_from(edges), min_size=1, max_size=8).map(
            lambda items: {"t": "array", "v": items}
        ),
    )


def portable_values() -> st.SearchStrategy[Doc]:
    """Every tag, edge numbers, astral strings, all byte values, nesting up to the limits.

    Weighted (hypothesis picks `one_of` branches evenly): mostly mixed trees and edge arrays,
    sometimes deep chains, rarely a 1 MiB value (costly to send).
    """
    small = small_values()
    edges = _edge_arrays()
    return st.one_of(small, small, edges, edges, _deep_values(), small, edges, _big_values())


def portable_cases() -> st.SearchStrategy[FuzzCase]:
    return portable_values().map(FuzzCase)


# --------------------------------------------------------------------------- malformed values

_INT_TAGS = _INT_RANGES
_NONCANONICAL_INTS = ["007", "+1", "-0", "1e3", " 1", "1 ", "1.0", "", "0x10", "١", "--1", "0-"]
_BAD_F64 = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1.0", "1.50", "01", "1E21", "+1",
            ".5", "5.", "1e+021", "-0.0", "1e21", "0.10", "1e-07", "1.0e+21", "", " 1", "nan",
            "0x1p3", "1_000"]  # fmt: skip
_BAD_BASE64 = ["AP8", "QQ", "QQ=", "Q===", "AB==", "AP9=", " QQ==", "QQ==\n", "QQ==QQ==", "*A==",
               "AP-_", "A", "====", "QUJD\nREVG"]  # fmt: skip
_UNKNOWN_TAGS = ["int", "I64", "string", "", "NULL", "float", "list", "map", "timestamp", "u128",
                 "uint64", "bytes ", "Str"]  # fmt: skip
_WRONG_TYPES: list[Doc] = [
    {"t": "i64", "v": 1},
    {"t": "u64", "v": 1},
    {"t": "f64", "v": 1.5},
    {"t": "str", "v": 1},
    {"t": "str", "v": None},
    {"t": "bool", "v": "true"},
    {"t": "bool", "v": 1},
    {"t": "bytes", "v": None},
    {"t": "bytes", "v": []},
    {"t": "array", "v": {}},
    {"t": "array", "v": "[]"},
    {"t": "object", "v": []},
    {"t": "object", "v": None},
    {"t": "blob", "v": "x"},
    {"t": "instant", "v": 1700000000000},
    {"t": "duration", "v": 1.5},
]
_NOT_VALUES: list[Doc] = [1, "x", None, True, [], [{"t": "null"}], {}, {"v": "1"}, {"t": 1},
                          {"t": None, "v": "1"}, {"T": "null"}]  # fmt: skip
_BAD_BLOBS: list[Doc] = [
    {"sha256": _SHA.upper(), "size": "0"},
    {"sha256": _SHA[:-1], "size": "0"},
    {"sha256": _SHA + "0", "size": "0"},
    {"sha256": _SHA, "size": "01"},
    {"sha256": _SHA, "size": "-1"},
    {"sha256": _SHA, "size": str(U64_MAX + 1)},
    {"sha256": _SHA, "size": 0},
    {"sha256": _SHA},
    {"size": "0"},
    {"sha256": _SHA, "size": "0", "media_type": ""},
    {"sha256": _SHA, "size": "0", "media_type": 1},
]


def _out_of_range() -> st.SearchStrategy[Doc]:
    def build(tag: str, above: bool, distance: int) -> Doc:
        low, high = _INT_TAGS[tag]
        return {"t": tag, "v": str(high + distance if above else low - distance)}

    return st.builds(build, st.sampled_from(sorted(_INT_TAGS)), st.booleans(),
                     st.one_of(st.just(1), st.integers(1, 10**30)))  # fmt: skip


def _noncanonical_ints() -> st.SearchStrategy[Doc]:
    def build(tag: str, text: str) -> Doc:
        return {"t": tag, "v": text}

    padded = _integers(0, 10**6).map(lambda n: "0" + str(n))
    texts = st.one_of(st.sampled_from(_NONCANONICAL_INTS), padded,
                      _integers(1, 10**6).map(lambda n: f"+{n}"))  # fmt: skip
    return st.builds(build, st.sampled_from(sorted(_INT_TAGS)), texts)


def _is_canonical_f64(text: str) -> bool:
    try:
        number = float(text)
    except ValueError:
        return False
    return math.isfinite(number) and format_f64(number) == text


def _alternative_float_texts(x: float) -> list[str]:
    """Texts that parse to (about) `x` but are not canonical f64 text of any double."""
    canonical = format_f64(x)
    candidates = {repr(x), f"{x:.17g}", f"{x:e}", f"{x:.1f}", canonical.upper(), canonical + "0",
                  f" {canonical}", canonical + ".0"}  # fmt: skip
    return sorted(text for text in candidates if not _is_canonical_f64(text))


def _bad_f64() -> st.SearchStrategy[Doc]:
    generated = st.floats(allow_nan=False, allow_infinity=False).flatmap(
        lambda x: st.sampled_from(_alternative_float_texts(x))
    )
    return st.one_of(st.sampled_from(_BAD_F64), generated).map(lambda v: {"t": "f64", "v": v})


def _lone_surrogate() -> st.SearchStrategy[str]:
    """A string holding exactly one lone surrogate (never half of a valid pair)."""
    high = st.integers(0xD800, 0xDBFF).map(chr)
    low = st.integers(0xDC00, 0xDFFF).map(chr)
    safe = st.text(_TEXT_CHARS, max_size=4)
    return st.one_of(
        st.builds(lambda a, s, b: a + s + b, safe, high, safe),
        st.builds(lambda a, s, b: a + s + b, safe, low, safe),
    )


def _leaf_defects() -> st.SearchStrategy[FuzzCase]:
    """One invalid tagged value whose own encoding is wrong (pointer: itself)."""

    def case(defect: str) -> Any:
        return lambda doc: FuzzCase(doc, INVALID_VALUE, "", defect)

    surrogate_str = _lone_surrogate().map(lambda s: {"t": "str", "v": s})
    surrogate_media = _lone_surrogate().map(
        lambda s: {"t": "blob", "v": {"sha256": _SHA, "size": "0", "media_type": s}}
    )
    surrogate_key = st.builds(
        lambda key, value: {"t": "object", "v": {key: value}}, _lone_surrogate(), scalars()
    )
    return st.one_of(
        _out_of_range().map(case("integer out of range")),
        _noncanonical_ints().map(case("non-canonical integer text")),
        _bad_f64().map(case("non-finite or non-canonical f64 text")),
        st.sampled_from(_BAD_BASE64).map(lambda v: {"t": "bytes", "v": v}).map(case("bad base64")),
        st.sampled_from(_UNKNOWN_TAGS).map(lambda t: {"t": t, "v": "1"}).map(case("unknown tag")),
        st.sampled_from(_WRONG_TYPES).map(case("payload of the wrong JSON type")),
        st.sampled_from(_NOT_VALUES).map(case("not a tagged value object")),
        st.sampled_from(_BAD_BLOBS).map(lambda v: {"t": "blob", "v": v}).map(case("bad blob")),
        st.sampled_from(
            sorted(set(_INT_TAGS) | {"f64", "str", "bytes", "bool", "array", "object", "blob"})
        )  # fmt: skip
        .map(lambda t: {"t": t})
        .map(case("missing v")),
        surrogate_str.map(case("lone surrogate in a str")),
        surrogate_media.map(case("lone surrogate in a blob media type")),
        surrogate_key.map(case("lone surrogate in an object key")),
    )


@dataclass(frozen=True)
class _Slot:
    """Where a defect sits in its container: an array index or an object key, with siblings."""

    kind: str  # "array" or "object"
    key: str
    before: tuple[Doc, ...]
    after: tuple[Doc, ...]


def _slots() -> st.SearchStrategy[list[_Slot]]:
    siblings = st.lists(scalars(), max_size=2).map(tuple)
    slot = st.builds(_Slot, st.sampled_from(["array", "object"]), keys(), siblings, siblings)
    return st.lists(slot, max_size=4)


def embed(defect: Doc, slots: list[_Slot]) -> tuple[Doc, str]:
    """Place `defect` inside valid containers; the document and the defect's pointer."""
    doc, pointer = defect, ""
    for slot in reversed(slots):
        if slot.kind == "array":
            items = [*slot.before, doc, *slot.after]
            doc = {"t": "array", "v": items}
            pointer = f"/v/{len(slot.before)}{pointer}"
        else:
            members: dict[str, Doc] = {}
            for index, sibling in enumerate((*slot.before, *slot.after)):
                sibling_key = f"{slot.key}~{index}"
                if sibling_key != slot.key:
                    members[sibling_key] = sibling
            members.pop(slot.key, None)
            # siblings first, the defect last: only the defect is invalid, so order is free
            members[slot.key] = doc
            doc = {"t": "object", "v": members}
            pointer = f"/v/{escape_pointer_token(slot.key)}{pointer}"
    return doc, pointer


def _embedded_leaf_defects() -> st.SearchStrategy[FuzzCase]:
    def build(case: FuzzCase, slots: list[_Slot]) -> FuzzCase:
        if not slots and not isinstance(case.doc, dict):
            # a non-object at the member itself may be a message-level type error (§2 step 5)
            slots = [_Slot("array", "", (), ())]
        doc, where = embed(case.doc, slots)
        return FuzzCase(doc, case.category, where + case.pointer, case.defect)

    return st.builds(build, _leaf_defects(), _slots())


def _too_deep() -> st.SearchStrategy[FuzzCase]:
    """A chain of containers reaching nesting level 65 or more: the first level-65 value."""

    def build(extra: int, pattern: list[Level], leaf: Doc) -> FuzzCase:
        chain = [pattern[i % len(pattern)] for i in range(MAX_DEPTH + extra - 1)]
        pointer = "".join(
            "/v/0" if key is None else f"/v/{escape_pointer_token(key)}"
            for key in chain[:MAX_DEPTH]
        )
        return FuzzCase(wrap(leaf, chain), LIMIT_EXCEEDED, pointer, f"{len(chain) + 1} levels deep")

    pattern = st.lists(levels(), min_size=1, max_size=3)
    return st.builds(build, st.integers(1, 6), pattern, scalars())


def _too_large() -> st.SearchStrategy[FuzzCase]:
    """A value over 1 MiB, alone or inside a container: the outermost value is refused."""

    def build(size: int, inside: bool) -> FuzzCase:
        big = {"t": "bytes", "v": _b64(b"\x00" * size)}
        doc = {"t": "array", "v": [big]} if inside else big
        return FuzzCase(doc, LIMIT_EXCEEDED, "", "canonical encoding over 1 MiB")

    sizes = st.integers(MAX_PORTABLE_BYTES + 3, MAX_PORTABLE_BYTES + 300)
    return st.builds(build, sizes, st.booleans())


def malformed_cases() -> st.SearchStrategy[FuzzCase]:
    """One defect each: out-of-range integers, non-canonical numbers, non-finite floats, bad
    base64, unknown tags, lone surrogates, too deep, too large."""
    leaf = _embedded_leaf_defects()  # weighted: hypothesis picks `one_of` branches evenly
    return st.one_of(leaf, leaf, leaf, leaf, _too_deep(), leaf, leaf, _too_large())


# --------------------------------------------------------------------------- curated examples


def curated_portable() -> list[FuzzCase]:
    """Every edge value alone (hypothesis runs these first, as explicit examples)."""
    return [FuzzCase(doc) for doc in _edge_docs()]


def curated_malformed() -> list[FuzzCase]:
    """Every listed defect once, inside an array (so the pointer is never the member itself)."""

    def inside(doc: Doc, defect: str, category: str = INVALID_VALUE) -> FuzzCase:
        return FuzzCase({"t": "array", "v": [{"t": "null"}, doc]}, category, "/v/1", defect)

    cases: list[FuzzCase] = []
    for tag, (low, high) in _INT_TAGS.items():
        for number in (low - 1, high + 1):
            cases.append(inside({"t": tag, "v": str(number)}, "integer out of range"))
        cases += [inside({"t": tag, "v": t}, "non-canonical integer") for t in _NONCANONICAL_INTS]
        cases.append(inside({"t": tag}, "missing v"))
    cases += [inside({"t": "f64", "v": text}, "bad f64 text") for text in _BAD_F64]
    cases += [inside({"t": "bytes", "v": text}, "bad base64") for text in _BAD_BASE64]
    cases += [inside({"t": tag, "v": "1"}, "unknown tag") for tag in _UNKNOWN_TAGS]
    cases += [inside(doc, "payload of the wrong JSON type") for doc in _WRONG_TYPES]
    cases += [inside(doc, "not a tagged value object") for doc in _NOT_VALUES]
    cases += [inside({"t": "blob", "v": blob}, "bad blob") for blob in _BAD_BLOBS]
    cases += [
        inside({"t": "str", "v": "a\ud800b"}, "lone surrogate in a str"),
        inside({"t": "str", "v": "\udc00"}, "lone surrogate in a str"),
        inside({"t": "object", "v": {"k\ud800": {"t": "null"}}}, "lone surrogate key"),
    ]
    return cases
