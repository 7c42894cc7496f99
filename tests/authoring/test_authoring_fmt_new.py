"""`fixtures fmt` (canonical layout, --check) and `fixtures new` (scaffold)."""

from __future__ import annotations

import json

from authoring_kit import fixture_document, write_fixture

from fakepeer.authoring.formatting import TOP_LEVEL_ORDER, format_document


def test_fmt_check_lists_files_and_exits_1(runner, app, tmp_path) -> None:
    path = write_fixture(tmp_path, fixture_document())
    before = path.read_text()
    result = runner.invoke(app, ["fixtures", "fmt", "--check", str(tmp_path)])
    assert result.exit_code == 1
    assert f"would reformat {path}" in result.output
    assert path.read_text() == before


def test_fmt_rewrites_then_check_is_clean(runner, app, tmp_path) -> None:
    path = write_fixture(tmp_path, fixture_document())
    assert runner.invoke(app, ["fixtures", "fmt", str(tmp_path)]).exit_code == 0
    text = path.read_text()
    assert text.startswith('{\n  "id": "values.sample",\n  "title"')
    assert text.endswith("}\n")
    assert runner.invoke(app, ["fixtures", "fmt", "--check", str(tmp_path)]).exit_code == 0


def test_fmt_leaves_other_json_alone_and_counts_only_fixtures(runner, app, tmp_path) -> None:
    path = write_fixture(tmp_path, fixture_document())
    other = tmp_path / "values" / "package.json"
    other.write_text('{"name":  "x"}')
    assert runner.invoke(app, ["fixtures", "fmt", str(tmp_path)]).exit_code == 0
    assert other.read_text() == '{"name":  "x"}'
    result = runner.invoke(app, ["fixtures", "fmt", str(tmp_path)])
    assert result.exit_code == 0
    assert "1 fixture file(s) already formatted" in result.output, result.output
    assert path.read_text().endswith("}\n")


def test_fmt_key_order_and_idempotence() -> None:
    document = fixture_document(notes="why")
    shuffled = dict(reversed(list(document.items())))
    text = format_document(shuffled)
    assert list(json.loads(text)) == [key for key in TOP_LEVEL_ORDER if key in document]
    assert format_document(json.loads(text)) == text


def test_fmt_keeps_lone_surrogates_escaped() -> None:
    text = format_document(fixture_document(title="a\ud800b é"))
    assert "\\ud800" in text and "é" in text
    text.encode("utf-8")


def test_fmt_reports_broken_json(runner, app, tmp_path) -> None:
    broken = tmp_path / "values" / "values.x.json"
    broken.parent.mkdir()
    broken.write_text("[")
    result = runner.invoke(app, ["fixtures", "fmt", str(tmp_path)])
    assert result.exit_code == 2
    assert "values.x.json: (root): expected a JSON document" in result.output


def test_new_scaffolds_a_fixture_that_needs_its_todos(runner, app, tmp_path) -> None:
    result = runner.invoke(
        app,
        ["fixtures", "new", "manifest.sample", "--category", "manifest", "--dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    path = tmp_path / "manifest" / "manifest.sample.json"
    document = json.loads(path.read_text())
    assert document["id"] == "manifest.sample"
    assert document["steps"][0]["send"]["kind"] == "conform.publish"
    validated = runner.invoke(app, ["fixtures", "validate", str(tmp_path)])
    assert validated.exit_code == 2
    assert "/rule/quote" in validated.output


def test_new_refuses_existing_bad_id_and_category(runner, app, tmp_path) -> None:
    args = ["fixtures", "new", "values.a", "--category", "values", "--dir", str(tmp_path)]
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "exists" in again.output
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    wrong = runner.invoke(
        app, ["fixtures", "new", "json.a", "--category", "values", "--dir", str(tmp_path)]
    )
    assert wrong.exit_code == 2 and "names the category 'json', not 'values'" in wrong.output
    # issue 22 (12): the prefix is a convention (docs/fixtures.md), so `new` does not require it
    plain = runner.invoke(
        app, ["fixtures", "new", "my-check", "--category", "values", "--dir", str(tmp_path)]
    )
    assert plain.exit_code == 0, plain.output
    unknown = runner.invoke(
        app, ["fixtures", "new", "x.a", "--category", "x", "--dir", str(tmp_path)]
    )
    assert unknown.exit_code == 2 and "unknown category" in unknown.output


def test_fmt_refuses_repeated_members(runner, app, tmp_path) -> None:
    path = tmp_path / "values" / "values.dup.json"
    path.parent.mkdir()
    path.write_text('{"id": "values.dup", "id": "values.other"}')
    result = runner.invoke(app, ["fixtures", "fmt", str(tmp_path)])
    assert result.exit_code == 2
    assert "appears twice" in result.output
    assert path.read_text() == '{"id": "values.dup", "id": "values.other"}'


def test_fmt_check_covers_lifecycle_scenarios(runner, app, tmp_path) -> None:
    """Issue 22 (12): `fmt --check` skipped the lifecycle scenarios silently."""
    import json
    from pathlib import Path

    source = next((Path(__file__).resolve().parents[2] / "fixtures" / "lifecycle").glob("*.json"))
    messy = tmp_path / "lifecycle" / source.name
    messy.parent.mkdir()
    messy.write_text(json.dumps(json.loads(source.read_text(encoding="utf-8"))), encoding="utf-8")
    result = runner.invoke(app, ["fixtures", "fmt", "--check", str(tmp_path)])
    assert result.exit_code != 0, result.output
    assert "1 of 1 fixture file(s) need" in result.output, result.output
