"""`matrix` (generation, --check) and `coverage` (RFD 2 sentences), on small fixture folders."""

from __future__ import annotations

import json
from dataclasses import replace

from authoring_kit import QUOTE, fixture_document, write_fixture

from fakepeer.authoring.coverage import Citation, build_coverage
from fakepeer.authoring.docs import parse_rfd
from fakepeer.cases import load_fixtures


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
    assert row["rule"]["quote"] == QUOTE
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
    report = json.loads(result.output[result.output.index("{") :])  # after any `root:` line
    assert report["checked"] == 1
    total = report["checked"] + report["referenced"] + report["uncovered"]
    assert total == report["total"] == len(report["rules"])
    covered = [rule for rule in report["rules"] if rule["status"] == "checked"]
    assert covered[0]["fixtures"] == ["values.sample"]
    assert "Unknown fields are ignored" in covered[0]["text"]
    text = runner.invoke(app, ["coverage", str(folder)])
    assert text.exit_code == 0
    assert "Uncovered RFD 2 sentences:" in text.output
    assert f"1 of {report['total']} RFD 2 sentences checked" in text.output


def test_coverage_splits_checked_referenced_and_decisions(tmp_path) -> None:
    """A fixture on a decision only references its sentence; decisions are listed apart."""
    rfd = parse_rfd("Title\n\nAlpha rule one here. Beta rule two here. Gamma rule three here.\n")
    plain = load_fixtures_from(tmp_path / "a", fixture_document("values.plain"))
    on_decision = load_fixtures_from(
        tmp_path / "b",
        fixture_document(
            "values.decided",
            rule={"section": "x", "quote": "Beta rule two here.", "decision": "D-X"},
        ),
    )
    plain[0] = replace(plain[0], rule=replace(plain[0].rule, quote="Alpha rule one here."))
    citations = [Citation("decision", "D-Y", "Gamma rule three", justifies=False)]
    report = build_coverage(plain + on_decision, rfd, citations, decisions=["D-X", "D-Y"])
    assert [rule["status"] for rule in report["rules"]] == ["checked", "referenced", "referenced"]
    assert report["rules"][1]["references"] == ["values.decided"]
    assert report["rules"][2]["references"] == ["decision:D-Y"]
    assert report["decisions"] == [
        {"id": "D-X", "fixtures": ["values.decided"]},
        {"id": "D-Y", "fixtures": []},
    ]
    assert (report["decisions_total"], report["decisions_checked"]) == (2, 1)


def test_coverage_counts_sentences_checked_only_by_server_tests_apart(tmp_path) -> None:
    """Issue 33: a sentence a fixture justifies is checked by what an SDK runs; one justified
    only by another module's citation (the model server's tests) is counted apart."""
    rfd = parse_rfd("Title\n\nAlpha rule one here. Beta rule two here. Gamma rule three here.\n")
    plain = load_fixtures_from(tmp_path / "a", fixture_document("values.plain"))
    plain[0] = replace(plain[0], rule=replace(plain[0].rule, quote="Alpha rule one here."))
    citations = [
        Citation("server", "tests/server/test_x.py::test_a", "Alpha rule one here.", True),
        Citation("server", "tests/server/test_x.py::test_b", "Beta rule two here.", True),
    ]
    report = build_coverage(plain, rfd, citations, decisions=[])
    assert [rule["checked_by"] for rule in report["rules"]] == ["sdk", "server_tests", None]
    assert (report["checked"], report["checked_by_sdk"]) == (2, 1)
    assert report["checked_by_server_tests_only"] == 1


def load_fixtures_from(folder, document):
    write_fixture(folder, document)
    return load_fixtures([folder])


def test_uncovered_lists_whole_sentences_to_copy(runner, app) -> None:
    """Issue 14.6: `coverage --uncovered` never cuts a sentence, so a quote can be copied."""
    as_json = runner.invoke(app, ["coverage", "--json"])
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    result = runner.invoke(app, ["coverage", "--uncovered"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    uncovered = [rule for rule in report["rules"] if rule["status"] == "uncovered"]
    assert uncovered
    for rule in uncovered:
        assert f"  R{rule['number']:03d} {rule['text']}" in lines
