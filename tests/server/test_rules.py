"""The server's rules table: exact RFD 2 quotes, each checked by tests that exist."""

from __future__ import annotations

import importlib

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
