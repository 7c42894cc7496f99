"""`fixtures record` fails loudly and writes drafts an author can diff (issue 14.6)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from authoring_kit import fixture_document

from fakepeer.authoring.record import _supplied_by_fixture, in_author_order, suggested_vary


def _draft(tmp_path: Path) -> Path:
    document = fixture_document("values.draft")
    document["steps"] = document["steps"][:1]
    path = tmp_path / "values.draft.json"
    path.write_text(json.dumps(document))
    return path


def test_a_host_that_dies_at_registration_fails_the_command_with_its_stderr(
    runner, app, tmp_path: Path
) -> None:
    draft = _draft(tmp_path)
    crash = tmp_path / "crash.py"
    crash.write_text(
        "import sys\nprint('host exploded: no config', file=sys.stderr)\nsys.exit(3)\n"
    )
    sdk = f"{shlex.quote(sys.executable)} {shlex.quote(str(crash))}"
    result = runner.invoke(app, ["fixtures", "record", "--sdk", sdk, "--from", str(draft)])
    assert result.exit_code == 2, result.output
    assert "ended early" in result.output and "host exploded: no config" in result.output
    assert not (tmp_path / "values.draft.recorded.json").exists()


def test_no_vary_for_an_error_message_the_fixture_supplies() -> None:
    error = {"category": "app.boom", "message": "boom", "retryable": False, "details": {}}
    envelope = {"kind": "failed", "body": {"error": error}}
    assert suggested_vary(envelope) == ["/body/error/message"]
    assert _supplied_by_fixture(envelope, "/body/error/message", {"boom", "x"})
    assert not _supplied_by_fixture(envelope, "/body/error/message", {"x"})


def test_recorded_bodies_keep_the_authors_key_order() -> None:
    recorded = {"value": {"v": {"b": {"v": "2", "t": "i64"}, "a": {"t": "null"}}, "t": "object"}}
    author = {"value": {"t": "object", "v": {"a": {"t": "null"}, "b": {"t": "i64", "v": "1"}}}}
    ordered = in_author_order("completed", recorded, author)
    assert json.dumps(ordered) == (
        '{"value": {"t": "object", "v": {"a": {"t": "null"}, "b": {"t": "i64", "v": "2"}}}}'
    )
    failed = {"error": {}, "zzz": 1}
    assert list(in_author_order("step_failed", {**failed, "operation_id": "o"})) == [
        "operation_id",
        "error",
        "zzz",
    ]
