"""The schemas' canonical base64 pattern, checked without `re`'s per-group loop (§3.3)."""

from __future__ import annotations

import random
import re

from fakepeer.protocol.fastpath import CANONICAL_BASE64, strict_regex


def test_the_fast_base64_check_decides_exactly_what_the_regex_does() -> None:
    regex = re.compile(CANONICAL_BASE64[:-1] + r"\Z")
    fast = strict_regex(CANONICAL_BASE64)
    rng = random.Random(5)
    alphabet = "AQgwEIMUYcko048sB+/=a=\n-_"
    samples = ["", "QQ==", "QR==", "AP8=", "AP9=", "====", "A===", "QUJD", "QQ==\n", "QQ==QQ=="]
    samples += [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(50000)
    ]
    for text in samples:
        assert bool(fast.search(text)) == bool(regex.search(text)), repr(text)
