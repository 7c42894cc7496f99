"""Levels follow the stated rule as far as a machine can tell (scripts/level_review.py): a
`recommended` fixture names the decision it rests on, and no fixture's level contradicts what
its decision's entry in docs/decisions.md says its fixtures are."""

from __future__ import annotations

import importlib.util

from tests.support.helpers import REPO


def _script():  # noqa: ANN202 - a module object
    spec = importlib.util.spec_from_file_location("level_review", REPO / "scripts/level_review.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_fixture_is_off_the_stated_rule() -> None:
    review = _script()
    fixtures = review.load(REPO)
    found = review.flags(fixtures, review.decision_levels(REPO / "docs" / "decisions.md"))
    off = {
        ident: [reason for reason in reasons if "both levels" not in reason]
        for ident, reasons in found.items()
    }
    off = {ident: reasons for ident, reasons in off.items() if reasons}
    assert not off, off


def test_the_review_flags_what_it_should() -> None:
    review = _script()
    said = {"D-X": "recommended"}
    fixtures = [
        {"id": "a.one", "level": "recommended", "rule": {}},
        {"id": "a.two", "level": "required", "rule": {"decision": "D-X"}},
        {"id": "a.three", "level": "recommended", "rule": {"decision": "D-X"}},
    ]
    found = review.flags(fixtures, said)
    assert found["a.one"] == ["recommended without a rule.decision"]
    assert "D-X says its fixtures are recommended" in found["a.two"]
    assert found["a.three"] == ["D-X has fixtures of both levels"]


def test_the_listing_runs(capsys) -> None:  # noqa: ANN001 - pytest's fixture
    assert _script().main(["--category", "emission"]) == 0
    out = capsys.readouterr()
    assert "emission.json-document-as-given" in out.out and "fixtures:" in out.err
