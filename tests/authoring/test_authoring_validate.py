"""`fixtures validate`: problems name the file, a JSON pointer and the expectation; exit 2."""

from __future__ import annotations

import json

from authoring_kit import fixture_document, write_fixture


def _validate(runner, app, *paths):
    return runner.invoke(app, ["fixtures", "validate", *map(str, paths)])


def test_valid_fixture_passes(runner, app, tmp_path) -> None:
    write_fixture(tmp_path, fixture_document())
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 0, result.output
    assert "1 fixture file(s) valid" in result.output


def test_quote_not_in_rfd(runner, app, tmp_path) -> None:
    document = fixture_document(rule={"section": "x", "quote": "Unknown fields are welcome"})
    path = write_fixture(tmp_path, document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert f"{path}: /rule/quote:" in result.output
    assert "rfd-2-execution-protocol.txt" in result.output


def test_quote_is_whitespace_insensitive(runner, app, tmp_path) -> None:
    document = fixture_document(
        rule={
            "section": "x",
            "quote": "Unknown   fields\n are ignored;  unknown required enum variants or "
            "capabilities fail explicitly.",
        }
    )
    write_fixture(tmp_path, document)
    assert _validate(runner, app, tmp_path).exit_code == 0


def test_quote_shorter_than_a_full_clause_is_refused(runner, app, tmp_path) -> None:
    for index, quote in enumerate(
        [
            "malformed values",  # a list item, far below the clause length
            "Unknown fields are ignored",  # a whole clause, but only four words
            "the payload limits as the execution-request, replay, and nesting bounds",  # cut short
            "signed and unsigned integers outside JavaScript’s safe range",  # between commas
        ]
    ):
        document = fixture_document(f"values.short{index}", rule={"section": "x", "quote": quote})
        write_fixture(tmp_path / str(index), document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert result.output.count("/rule/quote: expected a full clause of RFD 2") == 4


def test_full_clauses_are_accepted(runner, app, tmp_path) -> None:
    for index, quote in enumerate(
        [
            "Unknown fields are ignored; unknown required enum variants or capabilities fail "
            "explicitly.",  # a whole sentence
            "In a targeted execution only the named step’s current callback runs",  # up to a ;
            # between dashes:
            "a JSON document serializes as given and opaque bytes cross unchanged",
            "anything retained across invocations is a cache of durable history, never an "
            "authority",  # after a colon, to the sentence end without its period
            "so a later invocation replays the wait instead of arming it again.",  # , so … end
        ]
    ):
        document = fixture_document(f"values.full{index}", rule={"section": "x", "quote": quote})
        write_fixture(tmp_path / str(index), document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 0, result.output


def test_decision_must_exist(runner, app, tmp_path) -> None:
    rule = {"section": "x", "quote": fixture_document()["rule"]["quote"]}
    write_fixture(
        tmp_path / "a", fixture_document("values.known", rule=rule | {"decision": "D-FRAMING"})
    )
    write_fixture(
        tmp_path / "b", fixture_document("values.unknown", rule=rule | {"decision": "D-NOPE"})
    )
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert (
        "values.unknown.json: /rule/decision: expected a decision id defined in docs/decisions.md"
        in result.output
    )
    assert "values.known.json" not in result.output


def test_id_must_match_file_and_category(runner, app, tmp_path) -> None:
    write_fixture(tmp_path, fixture_document(), name="values.other")
    moved = fixture_document("values.moved")
    path = tmp_path / "json" / "values.moved.json"
    path.parent.mkdir()
    path.write_text(json.dumps(moved))
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert "values.other.json: /id:" in result.output
    assert "values.moved.json: /category:" in result.output


def test_validate_and_run_agree_on_the_id_rule(runner, app, tmp_path) -> None:
    """Issue 10 problem 10: validate demanded a `<category>.` prefix that run (and
    docs/fixtures.md) did not; the rule is the pattern, uniqueness and the file name."""
    write_fixture(tmp_path, fixture_document("sample-no-prefix"))
    result = _validate(runner, app, tmp_path)
    assert "/id:" not in result.output, result.output
    listed = runner.invoke(
        app, ["run", "--fixtures", str(tmp_path), "--no-default-fixtures", "--list"]
    )
    assert listed.exit_code == 0 and "sample-no-prefix" in listed.output, listed.output


def test_validate_refuses_an_id_the_corpus_already_uses(runner, app, tmp_path) -> None:
    """Issue 10 problem 10: validate passed a file whose id run then refused as a duplicate."""
    document = fixture_document("values.bytes-empty")
    write_fixture(tmp_path, document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2, result.output
    assert "values.bytes-empty.json: /id: id 'values.bytes-empty' is also used by" in result.output
    ran = runner.invoke(app, ["run", "--fixtures", str(tmp_path), "--list"])
    assert "is also used by" in str(ran.exception), "run refuses it too"


def test_duplicate_ids(runner, app, tmp_path) -> None:
    write_fixture(tmp_path, fixture_document())
    other = tmp_path / "second"
    write_fixture(other, fixture_document())
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert "is also used by" in result.output


def test_send_and_expect_kinds_checked(runner, app, tmp_path) -> None:
    document = fixture_document()
    document["steps"][0]["send"]["kind"] = "completed"
    document["steps"][1]["expect"]["kind"] = "invoke"
    path = write_fixture(tmp_path, document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert f"{path}: /steps/0/send/kind: expected a bench-to-host kind" in result.output
    assert f"{path}: /steps/1/expect/kind: expected a host-to-bench kind" in result.output


def test_macros_checked(runner, app, tmp_path) -> None:
    document = fixture_document()
    document["steps"][0]["send"]["body"]["input"] = {"$plian": "x"}
    write_fixture(tmp_path, document)
    near = fixture_document("values.near")
    near["steps"][0]["send"]["body"]["input"] = {"$plain": "x", "t": "str"}
    write_fixture(tmp_path, near)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert "unknown macro '$plian'" in result.output
    assert "/steps/0/send/body/input: a member starting with $" in result.output


def test_protocol_section_and_capability_checked(runner, app, tmp_path) -> None:
    document = fixture_document(capabilities=["teleport"])
    document["rule"]["protocol"] = "§99.1"
    write_fixture(tmp_path, document)
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    no_section = "neither docs/protocol.md nor docs/host-contract.md has a section §99.1"
    assert f"/rule/protocol: {no_section}" in result.output
    assert "/capabilities/0: expected a §7.3 capability" in result.output


def test_schema_problem_and_bad_json_have_no_traceback(runner, app, tmp_path) -> None:
    document = fixture_document(level="optional")
    write_fixture(tmp_path, document)
    broken = tmp_path / "values" / "values.broken.json"
    broken.write_text("{not json")
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "/level" in result.output
    assert "values.broken.json: (root): not valid JSON" in result.output


def test_recorded_draft_is_refused(runner, app, tmp_path) -> None:
    write_fixture(tmp_path, fixture_document(), name="values.sample.recorded")
    result = _validate(runner, app, tmp_path)
    assert result.exit_code == 2
    assert "a recorded draft is not a fixture" in result.output


def test_scaffold_leftovers_are_refused(runner, app, tmp_path) -> None:
    """Issue 22 (12): an unedited `TODO:` title or notes no longer passes validate."""
    document = fixture_document()
    document["title"] = "TODO: one line saying what the SDK must do"
    document["notes"] = "TODO: the wrong SDK behaviour this fixture catches."
    path = write_fixture(tmp_path, document)
    result = _validate(runner, app, path)
    assert result.exit_code == 2, result.output
    assert "/title" in result.output and "/notes" in result.output
    assert "still the scaffold's text" in result.output


def test_capabilities_must_cover_the_ops_and_declarations_a_fixture_uses(
    runner, app, tmp_path
) -> None:
    """Issue 22 (12): a child invoke with `"capabilities": []` ran (and failed) on an SDK without
    child invocations instead of being skipped; validate names the op and the capability."""
    document = fixture_document()
    body = document["steps"][0]["send"]["body"]
    body["function_id"] = "conform.program"
    program = [
        {"op": "if_ambient", "key": "k", "equals": "v", "then": [{"op": "sleep", "id": "t"}]},
        {"op": "invoke", "id": "c", "function": "f", "input": {"$plain": 1}},
    ]
    body["input"] = {"$plain": {"ops": program}}
    document["steps"][1] = {
        "expect": {
            "kind": "declared",
            "body": {"declaration": {"type": "wait", "step_id": "w", "event": "e"}},
        }
    }
    path = write_fixture(tmp_path, document)
    result = _validate(runner, app, path)
    assert result.exit_code == 2, result.output
    for capability in ("child_invocations", "timers", "event_waits"):
        assert f"needs capability {capability!r}" in result.output, result.output
    assert "op 'invoke'" in result.output
    document["capabilities"] = ["child_invocations", "event_waits", "timers"]
    result = _validate(runner, app, write_fixture(tmp_path, document))
    assert "needs capability" not in result.output, result.output
