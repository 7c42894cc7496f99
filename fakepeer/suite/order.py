"""The order cases are played in: seeded shuffles (`run --shuffle [SEED]`) and isolation.

Why: a host that keeps state in its process can make a case pass or fail because of the case
before it. Fixture-id order hides that; a seeded random order shows it, and the seed (printed
and in every report) replays the same order. `--isolate` plays every case on a fresh host
process (the `fresh-process` variant on the whole selection), so a case cannot lean on any
neighbour at all. Reports always list cases in fixture-id order, whatever order they ran in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
#: Seeds are whole numbers from 0 to this bound (a printed seed stays short).
MAX_SEED = 2**32 - 1
#: What `--shuffle` without a seed stands for (cli/entry.py rewrites the bare option to it).
RANDOM = "random"


def parse_seed(text: str) -> int:
    """The seed of `--shuffle TEXT` (`random`: a new one); ValueError with a one-line reason."""
    if text == RANDOM:
        return random.SystemRandom().randint(0, MAX_SEED)
    try:
        seed = int(text, 10)
    except ValueError:
        seed = -1
    if not 0 <= seed <= MAX_SEED or not text.isdigit():
        raise ValueError(f"--shuffle takes a whole number from 0 to {MAX_SEED}, got {text!r}")
    return seed


def play_order(items: Sequence[T], seed: int | None) -> list[T]:
    """`items` in a seeded random order (the same seed, the same order), or as given."""
    ordered = list(items)
    if seed is not None:
        random.Random(seed).shuffle(ordered)
    return ordered


def bare_shuffle_argv(argv: Sequence[str]) -> list[str]:
    """`--shuffle` without a seed (last, or followed by another option) becomes
    `--shuffle=random`: the command-line parser needs a value for every option that takes one."""
    out = list(argv)
    for index, arg in enumerate(out):
        if arg == "--":
            break
        if arg == "--shuffle":
            following = out[index + 1] if index + 1 < len(out) else None
            if following is None or following.startswith("-"):
                out[index] = f"--shuffle={RANDOM}"
    return out
