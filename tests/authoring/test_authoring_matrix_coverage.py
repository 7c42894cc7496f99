"""`matrix` (generation, --check) and `coverage` (RFD 2 sentences), on small fixture folders."""

from __future__ import annotations

import json

from authoring_kit import fixture_document, write_fixture

from fakepeer.authoring.docs import parse_rfd


def test_matrix_generates_sorted_rows_and_checks_staleness(runner, app, tmp_path) -> None:
    folder = tmp_path / "fixtures"
    write_fixture(folder, fixture_document("values.b"))
    write_fixture(
        folder, fixture_document("json.a", category="json", capabilities=["json_convenience"])
    )
    out = tmp_path / "matrix.json"
    args = ["matrix", "--fixtures", str(folder), "--output", str(out)]
    stale = runner.invoke(app, [*args, "--check"])
    assert stale.exit_code == 1 and "does not exist" in stale.output
    assert runner.invoke(app, args).exit_code == 0
    matrix = json.loads(out.read_text())
    assert [row["id"] for row in matrix["fixtures"]] == ["json.a", "values.b"]
    row = matrix["fixtures"][0]
    assert row["rule"]["quote"] == "Unknown fields are ignored"
    assert row["rule"]["protocol"] == "§2"
    assert row["capabilities"] == ["json_convenience"]
    assert row["path"].endswith("json/json.a.json")
    assert matrix["count"] == 2 and matrix["categories"] == {"json": 1, "values": 1}
    assert runner.invoke(app, [*args, "--check"]).exit_code == 0
    write_fixture(folder, fixture_document("values.c"))
    again = runner.invoke(app, [*args, "--check"])
    assert again.exit_code == 1 and "values.c" in again.output


def test_matrix_refuses_invalid_fixtures(runner, app, tmp_path) -> None:
    folder = tmp_path / "fixtures"
    write_fixture(folder, fixture_document(), name="values.misnamed")
    result = runner.invoke(
        app, ["matrix", "--fixtures", str(folder), "--output", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 2
    assert "values.misnamed.json: /id" in result.output


def test_rfd_sentences() -> None:
    rfd = parse_rfd(
        "Title line\n\nFirst rule uses step.run here. Second: 1.5s\nwraps.\n\nThird rule:\n"
    )
    assert [s.text for s in rfd.sentences] == [
        "First rule uses step.run here.",
        "Second: 1.5s wraps.",
        "Third rule:",
    ]
    assert [s.paragraph for s in rfd.sentences] == [2, 2, 3]
    spanning = rfd.sentences_for("here. Second")
    assert [s.number for s in spanning] == [1, 2]
    assert rfd.contains("Second: 1.5s   wraps")


def test_coverage_json_and_text(runner, app, tmp_path) -> None:
    folder = tmp_path / "fixtures"
    write_fixture(folder, fixture_document())
    result = runner.invoke(app, ["coverage", "--json", str(folder)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["covered"] == 1
    assert report["covered"] + report["uncovered"] == report["total"] == len(report["rules"])
    covered = [rule for rule in report["rules"] if rule["fixtures"]]
    assert covered[0]["fixtures"] == ["values.sample"]
    assert "Unknown fields are ignored" in covered[0]["text"]
    text = runner.invoke(app, ["coverage", str(folder)])
    assert text.exit_code == 0
    assert "Uncovered RFD 2 sentences:" in text.output
    assert f"1 of {report['total']} RFD 2 sentences covered" in text.output
