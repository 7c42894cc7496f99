"""The server's rules table: exact RFD 2 quotes, each checked by tests that exist."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import fakepeer.server
from fakepeer.authoring.docs import load_rfd
from fakepeer.server.rules import RULES, server_citations


def test_every_quote_is_one_exact_rfd_sentence() -> None:
    rfd = load_rfd()
    for rule in RULES:
        assert rfd.contains(rule.quote), rule.quote
        numbers = [sentence.number for sentence in rfd.sentences_for(rule.quote)]
        assert numbers == [rule.sentence], (rule.sentence, numbers)


def test_every_rule_names_tests_that_exist() -> None:
    for rule in RULES:
        assert rule.tests, rule.sentence
        for test in rule.tests:
            path, name = test.split("::")
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            assert callable(getattr(module, name, None)), test


def test_citations_feed_coverage() -> None:
    citations = server_citations()
    assert len(citations) == len(RULES)
    assert all(ident.startswith("server:tests/server/") for ident, _ in citations)


def _defines(module_name: str, name: str) -> bool:
    """Whether the server module defines `name` itself, or one of its classes does (a method
    or a dataclass field; inherited ones do not count: they live elsewhere)."""
    module = importlib.import_module(f"fakepeer.server.{module_name}")
    if name in vars(module):
        return True
    classes = [v for v in vars(module).values() if isinstance(v, type)]
    return any(
        name in vars(cls) or name in getattr(cls, "__dataclass_fields__", {})
        for cls in classes
        if cls.__module__ == module.__name__
    )


def test_every_place_a_rule_names_exists() -> None:
    """`module.name` in a row's `implemented_in` (a module of fakepeer/server) names something
    that module defines: moving a method to another module cannot leave the table pointing at
    the old one."""
    modules = {path.stem for path in Path(fakepeer.server.__file__).parent.glob("*.py")}
    stale = [
        (rule.sentence, f"{module_name}.{name}")
        for rule in RULES
        for module_name, name in re.findall(r"\b([a-z_]+)\.(\w+)", rule.implemented_in)
        if module_name in modules and name != "py" and not _defines(module_name, name)
    ]
    assert stale == []
