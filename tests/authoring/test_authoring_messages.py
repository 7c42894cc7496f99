"""`fixtures validate` checks sends and expects against the message schemas (issue 14.2).

A fixture mistake must be caught before any SDK is blamed for it: the problem names the file,
the JSON pointer into the fixture and the rule (the message kind's section and schema file).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from authoring_kit import fixture_document, write_fixture

from fakepeer.authoring.validate import validate_paths

DECLARED_WAIT = {
    "type": "wait",
    "step_id": "approval",
    "event": "order.approved",
    "correlation": {},
    "timeout_ms": "7200000",
}


def _problems(tmp_path: Path, document: dict) -> list[str]:
    write_fixture(tmp_path, document)
    _, problems = validate_paths([tmp_path])
    # these documents break a message schema on purpose; what the oracle makes of their answer
    # is tested in tests/oracle, so only the schema problems are counted here
    return [
        f"{problem.pointer}: {problem.message}"
        for problem in problems
        if "the oracle disagrees" not in problem.message
    ]


def _expect(document: dict, kind: str, body: dict, **extra: object) -> dict:
    document["steps"][1] = {"expect": {"kind": kind, "body": body}, **extra}
    return document


def test_a_badly_typed_expect_names_file_pointer_and_rule(tmp_path: Path) -> None:
    document = _expect(
        fixture_document(),
        "completed",
        {"value": {"t": "i64", "v": 7200000}},
    )
    path = write_fixture(tmp_path, document)
    _, problems = validate_paths([tmp_path])
    assert len(problems) == 1, problems
    problem = problems[0]
    assert problem.file == path
    assert problem.pointer == "/steps/1/expect/body/value"
    assert "protocol.invalid_value" in problem.message
    assert "`completed` message of docs/protocol.md §10.2" in problem.message
    assert "completed.schema.json" in problem.message


def test_a_number_where_the_protocol_has_a_decimal_string(tmp_path: Path) -> None:
    wait = {**DECLARED_WAIT, "timeout_ms": 7200000}
    # a declared wait needs `event_waits` (§7.3): listed, so only the schema problem is left
    document = _expect(
        fixture_document(capabilities=["event_waits"]), "declared", {"declaration": wait}
    )
    found = _problems(tmp_path, document)
    assert len(found) == 1 and found[0].startswith("/steps/1/expect/body/declaration"), found
    good = _expect(
        fixture_document(capabilities=["event_waits"]), "declared", {"declaration": DECLARED_WAIT}
    )
    assert _problems(tmp_path / "good", good) == []


def test_a_badly_typed_send_member_is_named(tmp_path: Path) -> None:
    document = fixture_document()
    document["steps"][0]["send"]["body"]["run_id"] = 5
    found = _problems(tmp_path, document)
    assert len(found) == 1 and found[0].startswith("/steps/0/send/body/run_id: "), found
    assert "§9.1" in found[0]


def test_a_deliberate_fault_answered_by_a_protocol_error_is_allowed(tmp_path: Path) -> None:
    document = fixture_document()
    document["steps"][0]["send"]["body"]["input"] = {"t": "i64", "v": "01"}
    error = {
        "category": "protocol.invalid_value",
        "message": "x",
        "retryable": False,
        "details": {"pointer": "/body/input"},
    }
    allowed = _expect(document, "protocol_error", {"error": error}, vary=["/body/error/message"])
    assert _problems(tmp_path, allowed) == []
    elsewhere = {**error, "details": {"pointer": "/body/history"}}
    wrong = _expect(document, "protocol_error", {"error": elsewhere}, vary=["/body/error/message"])
    found = _problems(tmp_path / "wrong", wrong)
    assert len(found) == 1 and found[0].startswith("/steps/0/send/body/input"), found


def test_vary_and_derive_pointers_are_not_required_in_an_expect(tmp_path: Path) -> None:
    error = {"category": "app.boom", "retryable": False, "details": {}}
    varied = _expect(fixture_document(), "failed", {"error": error}, vary=["/body/error/message"])
    assert _problems(tmp_path, varied) == []
    fixed = _expect(fixture_document(), "failed", {"error": error})
    found = _problems(tmp_path / "fixed", fixed)
    assert found and "'message' is a required property" in found[0], found


def test_run_applies_the_check_to_fixtures_files(tmp_path: Path) -> None:
    document = _expect(fixture_document(), "completed", {"value": {"t": "i64", "v": 7}})
    path = write_fixture(tmp_path, document)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fakepeer",
            "run",
            "--no-default-fixtures",
            "--fixtures",
            str(tmp_path),
            "--list",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stdout
    assert f"{path}: /steps/1/expect/body/value: protocol.invalid_value" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_quote_with_straight_apostrophes_gets_a_typography_hint(tmp_path: Path) -> None:
    quote = "without making Rust types or one language's runtime behavior part"
    document = fixture_document(rule={"section": "Goals", "quote": quote, "protocol": "§2"})
    found = _problems(tmp_path, document)
    assert len(found) == 1 and found[0].startswith("/rule/quote: "), found
    assert "RFD 2 uses typographic characters here: '’' where the quote has \"'\"" in found[0]
    assert "one language’s runtime" in found[0]


def test_a_misspelt_quote_gets_the_closest_sentence(tmp_path: Path) -> None:
    document = fixture_document(rule={"section": "x", "quote": "Unknown fields are ignord"})
    found = _problems(tmp_path, document)
    assert "the closest RFD 2 sentence is: 'Unknown fields are ignored;" in found[0], found
