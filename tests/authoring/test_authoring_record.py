"""`fixtures record` against the bundled Python conformance host: a draft, never an overwrite."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from authoring_kit import fixture_document

from fakepeer.authoring.record import suggested_vary
from fakepeer.cases import repository_root

HOST = repository_root() / "runners" / "python" / "host.py"
pytestmark = pytest.mark.skipif(not HOST.is_file(), reason="the bundled Python host is missing")
SDK = f"{shlex.quote(sys.executable)} {shlex.quote(str(HOST))}"


def _draft(tmp_path):
    document = fixture_document("values.draft")
    document["steps"] = document["steps"][:1]  # sends only
    path = tmp_path / "values.draft.json"
    path.write_text(json.dumps(document))
    return path


def test_record_writes_a_reviewable_draft(runner, app, tmp_path) -> None:
    draft = _draft(tmp_path)
    before = draft.read_text()
    result = runner.invoke(
        app, ["fixtures", "record", "--sdk", SDK, "--from", str(draft), "--wait", "10"]
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "values.draft.recorded.json"
    recorded = json.loads(out.read_text())
    # issue 22 (12): `$plain` where it says the same, and the pass's effect trace recorded
    assert recorded["steps"][1] == {
        "expect": {"kind": "completed", "body": {"value": {"$plain": "x"}}},
        "trace": {"events": []},
    }
    assert recorded["notes"].startswith("RECORDED DRAFT")
    assert recorded["title"].startswith("DRAFT: ")
    assert draft.read_text() == before
    again = runner.invoke(app, ["fixtures", "record", "--sdk", SDK, "--from", str(draft)])
    assert again.exit_code == 2 and "--force" in again.output
    validated = runner.invoke(app, ["fixtures", "validate", str(out)])
    assert validated.exit_code == 2 and "recorded draft" in validated.output


def test_record_refuses_to_target_an_accepted_fixture(runner, app, tmp_path) -> None:
    draft = _draft(tmp_path)
    result = runner.invoke(
        app,
        ["fixtures", "record", "--sdk", SDK, "--from", str(draft), "--out", str(draft), "--force"],
    )
    assert result.exit_code == 2
    assert ".recorded.json" in result.output


def test_record_reports_a_missing_sdk(runner, app, tmp_path) -> None:
    draft = _draft(tmp_path)
    result = runner.invoke(
        app, ["fixtures", "record", "--sdk", "/no/such/host", "--from", str(draft)]
    )
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_suggested_vary_marks_sdk_chosen_text() -> None:
    caught = {
        "t": "object",
        "v": {
            "caught": {
                "t": "object",
                "v": {
                    "category": {"t": "str", "v": "sdk.json"},
                    "message": {"t": "str", "v": "bad"},
                    "retryable": {"t": "bool", "v": False},
                    "details": {"t": "object", "v": {}},
                },
            }
        },
    }
    assert suggested_vary({"kind": "completed", "body": {"value": caught}}) == [
        "/body/value/v/caught/v/message"
    ]
    failed = {"kind": "failed", "body": {"error": {"category": "x", "message": "m"}}}
    assert suggested_vary(failed) == ["/body/error/message"]


def test_recorded_values_are_plain_only_where_plain_says_the_same() -> None:
    """Issue 22 (12): bytes, u64 and f64 have no plain spelling that expands back to them; a value
    holding one stays tagged, one without becomes `$plain`."""
    from fakepeer.authoring.record import plain_values

    mixed = {"t": "array", "v": [{"t": "i64", "v": "1"}, {"t": "bytes", "v": ""}]}
    plain = {"t": "object", "v": {"a": {"t": "null"}, "b": {"t": "array", "v": []}}}
    for value, expected in ((mixed, mixed), (plain, {"$plain": {"a": None, "b": []}})):
        envelope = {"kind": "completed", "body": {"value": value}}
        assert plain_values(envelope, envelope["body"]) == {"value": expected}
