"""Shared by every test: each test starts from the root found from the current folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakepeer.cases.root import configure


@pytest.fixture(autouse=True)
def _fresh_root() -> Iterator[None]:
    """A CLI test may pass `--root DIR`; the next test must not inherit that choice."""
    yield
    configure(None, announce=False)
