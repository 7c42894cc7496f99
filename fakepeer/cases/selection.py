"""Choosing which fixtures run: `-k`, `--category`, `--shard K/N` (deterministic by sorted id)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fakepeer.cases.keywords import Keywords
from fakepeer.cases.model import Fixture


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse `K/N` with 1 <= K <= N; raise ValueError with a readable message."""
        try:
            index_text, count_text = text.split("/")
            index, count = int(index_text), int(count_text)
        except ValueError:
            raise ValueError(f"--shard takes K/N (for example 2/4), got {text!r}") from None
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"--shard K/N needs 1 <= K <= N, got {text!r}")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def select(
    fixtures: Iterable[Fixture],
    *,
    keywords: Sequence[Keywords] = (),
    categories: Sequence[str] = (),
    shard: Shard | None = None,
) -> list[Fixture]:
    """Filter, sort by id, then keep every N-th fixture of the shard (round robin, so balanced).

    A fixture is kept when it matches every `-k` expression (a repeated `-k` narrows).
    """
    chosen = sorted(fixtures, key=lambda fixture: fixture.id)
    for expression in keywords:
        chosen = [f for f in chosen if expression.matches(f.id, f.category)]
    if categories:
        wanted = set(categories)
        chosen = [f for f in chosen if f.category in wanted]
    if shard is not None:
        chosen = [f for i, f in enumerate(chosen) if i % shard.count == shard.index - 1]
    return chosen
