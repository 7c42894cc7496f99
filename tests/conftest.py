"""Shared by every test: each test starts from the root found from the current folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from fakepeer.cases import cache
from fakepeer.cases.root import configure

# The cache of checked fixtures is off in tests (and the CLIs they start): a test that patches a
# check must see it run. tests/suite/test_edit_loop.py turns it on in a folder of its own.
os.environ.setdefault(cache.ENV, "off")


@pytest.fixture(autouse=True)
def _fresh_root() -> Iterator[None]:
    """A CLI test may pass `--root DIR`; the next test must not inherit that choice."""
    yield
    configure(None, announce=False)


def pytest_ignore_collect(collection_path: object, config: pytest.Config) -> bool | None:
    """`pytest --ryusen-sdk CMD` in this checkout collects the fixtures alone (as in an SDK's own
    repository with no tests of ours): the suite's own tests come along only when named, as in
    `pytest --ryusen-sdk CMD tests/cli`."""
    if (
        config.getoption("ryusen_sdk", None)
        and config.args_source is pytest.Config.ArgsSource.TESTPATHS
    ):
        return True
    return None
