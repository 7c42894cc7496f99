"""A seeded generator of fuzz documents: the bulk of a campaign, without hypothesis's draws.

Why: hypothesis spends 6 to 7 ms of CPU per example, so a campaign drawing every document from
it checks about 20 per second. This generator mirrors `strategies.py` (every tag, the same edge
values and defects, nesting to the limits, unicode, the size limit) with `random.Random`, at tens
of microseconds per document, and is deterministic from its seed. Hypothesis keeps the part it is
good at: when a bulk document disagrees, the campaign runs the hypothesis property (same seed)
for a minimal counterexample, and falls back to an exact shrink of the bulk document.

A malformed document carries its category and pointer by construction, as in `strategies.py`;
tests/fuzz/test_fuzz_generator.py holds both generators to the protocol model.
"""

from __future__ import annotations

import random

from fakepeer.fuzz import strategies as s
from fakepeer.fuzz.strategies import INVALID_VALUE, LIMIT_EXCEEDED, Doc, FuzzCase
from fakepeer.protocol.limits import I64_MAX, I64_MIN, MAX_DEPTH, U64_MAX
from fakepeer.protocol.values import escape_pointer_token, format_f64

#: One document in this many is a value at the 1 MiB edge (the hypothesis strategy: one in
#: eight). Such a value costs the SDK and the bench a thousand small ones, so the bulk sends it
#: rarely; the curated examples and the hypothesis pass still reach it.
BIG_ONE_IN = 128

_EDGES = s._edge_docs()
_SCALAR_TAGS = ("null", "bool", "i64", "u64", "f64", "str", "bytes", "instant", "duration", "blob")
_RANGES = {"i64": (I64_MIN, I64_MAX), "u64": (0, U64_MAX), "instant": (I64_MIN, I64_MAX),
           "duration": (I64_MIN, I64_MAX)}  # fmt: skip
#: Code points of valid text (no surrogates), weighted toward the interesting planes.
_PLANES = ((0x20, 0x7E), (0x00, 0x1F), (0xA0, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF),
           (0x10000, 0x10FFFF))  # fmt: skip


class Generator:
    """Documents for the two properties, reproducible from `seed`."""

    def __init__(self, seed: int, prop: str) -> None:
        self.rng = random.Random(f"{seed}:{prop}")

    # ------------------------------------------------------------------ portable

    def integer(self, low: int, high: int) -> int:
        rng = self.rng
        if rng.random() < 0.4:
            edges = [n for n in (*s._EDGE_INTS, low, high, low + 1, high - 1) if low <= n <= high]
            return rng.choice(edges)
        if rng.random() < 0.5:  # small magnitudes, where most values live
            return max(low, min(high, rng.randint(-1000, 1000)))
        return rng.randint(low, high)

    def f64(self) -> float:
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            return rng.choice(s._EDGE_FLOATS)
        if roll < 0.7:
            return rng.uniform(-1e6, 1e6)
        while True:  # any finite double, by its bits
            bits = rng.getrandbits(64)
            x = float.fromhex(_hex_double(bits))
            if x == x and abs(x) != float("inf"):
                return x

    def text(self, max_size: int) -> str:
        rng = self.rng
        if rng.random() < 0.3:
            return rng.choice(s._SPECIAL_TEXT)
        chars = []
        for _ in range(rng.randint(0, max_size)):
            low, high = rng.choice(_PLANES)
            chars.append(chr(rng.randint(low, high)))
        return "".join(chars)

    def key(self) -> str:
        while True:
            key = self.text(8)
            if not key.startswith("$"):
                return key

    def binary(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, max_size))

    def scalar(self) -> Doc:
        rng = self.rng
        if rng.random() < 0.5:
            return _copy(rng.choice(_EDGES))
        tag = rng.choice(_SCALAR_TAGS)
        if tag == "null":
            return {"t": "null"}
        if tag == "bool":
            return {"t": "bool", "v": rng.random() < 0.5}
        if tag in _RANGES:
            return {"t": tag, "v": str(self.integer(*_RANGES[tag]))}
        if tag == "f64":
            return {"t": "f64", "v": format_f64(self.f64())}
        if tag == "str":
            return {"t": "str", "v": self.text(24)}
        if tag == "bytes":
            data = bytes(range(256)) if rng.random() < 0.1 else self.binary(48)
            return {"t": "bytes", "v": s._b64(data)}
        payload = {"sha256": rng.randbytes(32).hex(), "size": str(self.integer(0, U64_MAX))}
        if rng.random() < 0.5:
            payload["media_type"] = self.text(12) or "x"
        return {"t": "blob", "v": payload}

    def tree(self, leaves: int = 16) -> Doc:
        """A mixed tree of every tag, at most `leaves` scalars, a few levels deep."""
        budget = [self.rng.randint(1, leaves)]
        return self._node(budget, 0)

    def _node(self, budget: list[int], level: int) -> Doc:
        rng = self.rng
        if budget[0] <= 1 or level >= 5 or rng.random() < 0.45:
            budget[0] -= 1
            return self.scalar()
        size = rng.randint(0, 4)
        if rng.random() < 0.5:
            return {"t": "array", "v": [self._node(budget, level + 1) for _ in range(size)]}
        members = {}
        for _ in range(size):
            members[self.key()] = self._node(budget, level + 1)
        return {"t": "object", "v": members}

    def level(self) -> s.Level:
        return None if self.rng.random() < 0.5 else self.key()

    def portable(self) -> FuzzCase:
        """Weighted like `strategies.portable_values`, the 1 MiB edge rarer (`BIG_ONE_IN`)."""
        rng = self.rng
        if rng.randrange(BIG_ONE_IN) == 0:
            size = s.MAX_PORTABLE_BYTES - (0 if rng.random() < 0.5 else rng.randint(0, 64))
            return FuzzCase({"t": "bytes", "v": s._b64(bytes([rng.randrange(256)]) * size)})
        roll = rng.randrange(7)
        if roll < 3:
            return FuzzCase(self.tree())
        if roll < 6:
            if rng.random() < 0.1:
                return FuzzCase({"t": "array", "v": [_copy(d) for d in _EDGES]})
            items = [_copy(rng.choice(_EDGES)) for _ in range(rng.randint(1, 8))]
            return FuzzCase({"t": "array", "v": items})
        inner = self.tree()
        room = MAX_DEPTH - s.depth(inner)
        chain = [self.level() for _ in range(rng.randint(1, MAX_DEPTH))]
        return FuzzCase(s.wrap(inner, chain[: max(0, room)]))

    # ------------------------------------------------------------------ malformed

    def lone_surrogate(self) -> str:
        rng = self.rng
        high = rng.random() < 0.5
        lone = chr(rng.randint(0xD800, 0xDBFF) if high else rng.randint(0xDC00, 0xDFFF))
        return self._safe(4) + lone + self._safe(4)

    def _safe(self, max_size: int) -> str:
        size = self.rng.randint(0, max_size)
        return "".join(chr(self.rng.randint(0x20, 0x7E)) for _ in range(size))

    def leaf_defect(self) -> FuzzCase:
        """One value whose own encoding is wrong (each defect of `strategies._leaf_defects`)."""
        rng = self.rng
        kind = rng.randrange(12)
        if kind == 0:
            tag = rng.choice(sorted(_RANGES))
            low, high = _RANGES[tag]
            distance = 1 if rng.random() < 0.5 else rng.randint(1, 10**30)
            value = high + distance if rng.random() < 0.5 else low - distance
            return _bad({"t": tag, "v": str(value)}, "integer out of range")
        if kind == 1:
            tag = rng.choice(sorted(_RANGES))
            roll = rng.randrange(3)
            if roll == 0:
                text = rng.choice(s._NONCANONICAL_INTS)
            elif roll == 1:
                text = "0" + str(self.integer(0, 10**6))
            else:
                text = f"+{self.integer(1, 10**6)}"
            return _bad({"t": tag, "v": text}, "non-canonical integer text")
        if kind == 2:
            texts = s._alternative_float_texts(self.f64()) if rng.random() < 0.5 else []
            text = rng.choice(texts) if texts else rng.choice(s._BAD_F64)
            return _bad({"t": "f64", "v": text}, "non-finite or non-canonical f64 text")
        if kind == 3:
            return _bad({"t": "bytes", "v": rng.choice(s._BAD_BASE64)}, "bad base64")
        if kind == 4:
            return _bad({"t": rng.choice(s._UNKNOWN_TAGS), "v": "1"}, "unknown tag")
        if kind == 5:
            return _bad(_copy(rng.choice(s._WRONG_TYPES)), "payload of the wrong JSON type")
        if kind == 6:
            return _bad(_copy(rng.choice(s._NOT_VALUES)), "not a tagged value object")
        if kind == 7:
            return _bad({"t": "blob", "v": _copy(rng.choice(s._BAD_BLOBS))}, "bad blob")
        if kind == 8:
            tags = sorted(set(_RANGES) | {"f64", "str", "bytes", "bool", "array", "object", "blob"})
            return _bad({"t": rng.choice(tags)}, "missing v")
        if kind == 9:
            return _bad({"t": "str", "v": self.lone_surrogate()}, "lone surrogate in a str")
        if kind == 10:
            blob = {"sha256": s._SHA, "size": "0", "media_type": self.lone_surrogate()}
            return _bad({"t": "blob", "v": blob}, "lone surrogate in a blob media type")
        doc = {"t": "object", "v": {self.lone_surrogate(): self.scalar()}}
        return _bad(doc, "lone surrogate in an object key")

    def slots(self) -> list[s._Slot]:
        rng = self.rng

        def siblings() -> tuple[Doc, ...]:
            return tuple(self.scalar() for _ in range(rng.randint(0, 2)))

        return [
            s._Slot(rng.choice(("array", "object")), self.key(), siblings(), siblings())
            for _ in range(rng.randint(0, 4))
        ]

    def embedded_defect(self) -> FuzzCase:
        case, slots = self.leaf_defect(), self.slots()
        if not slots and not isinstance(case.doc, dict):
            slots = [s._Slot("array", "", (), ())]  # see strategies._embedded_leaf_defects
        doc, where = s.embed(case.doc, slots)
        return FuzzCase(doc, case.category, where + case.pointer, case.defect)

    def too_deep(self) -> FuzzCase:
        rng = self.rng
        pattern = [self.level() for _ in range(rng.randint(1, 3))]
        chain = [pattern[i % len(pattern)] for i in range(MAX_DEPTH + rng.randint(1, 6) - 1)]
        pointer = "".join(
            "/v/0" if key is None else f"/v/{escape_pointer_token(key)}"
            for key in chain[:MAX_DEPTH]
        )
        doc = s.wrap(self.scalar(), chain)
        return FuzzCase(doc, LIMIT_EXCEEDED, pointer, f"{len(chain) + 1} levels deep")

    def too_large(self) -> FuzzCase:
        size = self.rng.randint(s.MAX_PORTABLE_BYTES + 3, s.MAX_PORTABLE_BYTES + 300)
        big = {"t": "bytes", "v": s._b64(b"\x00" * size)}
        doc = {"t": "array", "v": [big]} if self.rng.random() < 0.5 else big
        return FuzzCase(doc, LIMIT_EXCEEDED, "", "canonical encoding over 1 MiB")

    def malformed(self) -> FuzzCase:
        """Weighted like `strategies.malformed_cases`, the 1 MiB edge rarer (`BIG_ONE_IN`)."""
        if self.rng.randrange(BIG_ONE_IN) == 0:
            return self.too_large()
        return self.too_deep() if self.rng.randrange(7) == 0 else self.embedded_defect()

    def case(self, prop: str) -> FuzzCase:
        return self.portable() if prop == "round-trip" else self.malformed()


def _bad(doc: Doc, defect: str) -> FuzzCase:
    return FuzzCase(doc, INVALID_VALUE, "", defect)


def _copy(doc: Doc) -> Doc:
    """A fresh copy of a shared constant (documents are never mutated, but stay independent)."""
    if isinstance(doc, dict):
        return {key: _copy(value) for key, value in doc.items()}
    if isinstance(doc, list):
        return [_copy(item) for item in doc]
    return doc


def _hex_double(bits: int) -> str:
    """The float.fromhex text of the IEEE 754 double with these 64 bits (NaN/inf as such)."""
    sign = "-" if bits >> 63 else ""
    exponent = (bits >> 52) & 0x7FF
    mantissa = bits & ((1 << 52) - 1)
    if exponent == 0x7FF:
        return "nan" if mantissa else f"{sign}inf"
    if exponent == 0:
        return f"{sign}0x0.{mantissa:013x}p-1022"
    return f"{sign}0x1.{mantissa:013x}p{exponent - 1023}"


def generate(seed: int, prop: str, count: int) -> list[FuzzCase]:
    """`count` documents for property `prop`, the same for the same seed."""
    gen = Generator(seed, prop)
    return [gen.case(prop) for _ in range(count)]
