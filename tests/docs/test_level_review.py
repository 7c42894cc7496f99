"""Levels follow the stated rule as far as a machine can tell (scripts/level_review.py): a
`recommended` fixture names the decision it rests on, no fixture's level contradicts what its
decision's entry in docs/decisions.md says its fixtures are, and every part the rule of
docs/fixtures.md "Levels inside a fixture" makes recommended is listed under `recommend`."""

from __future__ import annotations

import json

from tests.support.helpers import REPO, load_script


def _script():  # noqa: ANN202 - a module object
    return load_script("level_review")


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


def test_every_fixture_lists_the_parts_the_rule_recommends() -> None:
    review = _script()
    missing = {}
    for path in sorted((REPO / "fixtures").rglob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        found = review.part_flags(document, review.expanded_steps(path))
        if found:
            missing[document["id"]] = found
    assert not missing, missing


def _refusal(category: str, **step: object) -> dict:
    error = {"category": category, "retryable": False, "details": {"pointer": "/body/x"}}
    return {
        "id": "a.refusal",
        "level": "required",
        "rule": {},
        "steps": [
            {"send_raw": "{}"},
            {"expect": {"kind": "protocol_error", "body": {"error": error}}, **step},
        ],
    }


def test_the_rule_names_each_class_of_recommended_part() -> None:
    review = _script()
    (parts,) = review.rule_parts(_refusal("protocol.invalid_value")).values()
    assert set(parts) == {"/body/error/category", "/body/error/details/pointer"}
    assert review.rule_parts(_refusal("protocol.unknown_function")) == {}  # a server acts on it
    listed = {"/body/error/category": "D-DECODE-ORDER"}
    flags = review.part_flags(_refusal("protocol.malformed", recommend=listed), None)
    assert flags == [
        "step 2: /body/error/details/pointer is required here, but it is the pointer of a "
        "refusal of a frame a correct server never sends"
    ]
    program = {"$plain": {"ops": [{"op": "run", "id": "a"}, {"op": "run", "id": "b", "name": "B"}]}}
    invoke = {"function_id": "conform.program", "input": program}
    declared = {
        "type": "step", "step_id": "a", "name": "a",
        "retry": {"max_attempts": 3, "backoff_ms": "1000"}, "has_compensation": False,
    }  # fmt: skip
    document = {
        "id": "a.declared",
        "level": "required",
        "rule": {},
        "steps": [
            {"send": {"kind": "invoke", "body": invoke}},
            {"expect": {"kind": "declared", "body": {"declaration": declared}}},
            {"send": {"kind": "invoke", "body": invoke}},
            {"expect": {"kind": "declared", "body": {"declaration": {**declared,
             "step_id": "b", "name": "B"}}}},
        ],
    }  # fmt: skip
    assert review.rule_parts(document) == {
        1: {
            "/body/declaration/name": review.WHY["name"],
            "/body/declaration/retry": review.WHY["retry"],
        },
        3: {"/body/declaration/retry": review.WHY["retry"]},
    }
    unhandled = {"category": "app.unhandled", "message": "", "retryable": True, "details": {}}
    document = {
        "id": "a.failed", "level": "required", "rule": {},
        "steps": [{"expect": {"kind": "failed", "body": {"error": unhandled}}}],
    }  # fmt: skip
    assert review.rule_parts(document) == {0: {"/body/error/details": review.WHY["unhandled"]}}


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
