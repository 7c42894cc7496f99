"""`ryusen-conform fixtures prove`: the incremental kill-matrix update and the command's steps.

The end-to-end tests work on a temporary checkout (a copy of fixtures/, docs/ and matrix.json,
the runners and tests linked) with a two-row kill matrix and `--mutant`, so they play a handful
of hosts, never the catalog.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakepeer.cases import load_fixtures
from tests.mutants import kill_matrix as km
from tests.mutants import prove

ROOT = Path(__file__).resolve().parents[2]
KNOWN = "values.bytes-missing-padding-refused"
NEW = "values.bytes-missing-padding-refused-again"
WRONG = "values.wrong-message"  # expects an error message text no SDK writes


def small_matrix() -> km.KillMatrix:
    """Three catalog mutants (one recommended-only) over four fixtures."""
    return km.KillMatrix(
        fixtures=sorted([KNOWN, "values.depth-64-accepted", "values.idle", "values.broken"]),
        baseline_failures={"python": ["values.broken"], "node": []},
        kills={
            "base64-padding-optional": [KNOWN],
            "depth-limit-63": ["values.depth-64-accepted"],
            "out-of-turn-answers-dropped": [],
        },
        seconds=1493.0,
        unapplicable={},
        needs_neighbours={"depth-limit-63": [KNOWN]},
        warnings={"out-of-turn-answers-dropped": ["values.idle", KNOWN]},
        stages={"shared_seconds": 871.0, "isolation_seconds": 622.0, "pairs_rechecked": 3.0},
        recommended_only=km.recommended_only_of(["out-of-turn-answers-dropped"]),
    )


def test_the_markdown_reads_back_as_the_matrix_it_renders() -> None:
    matrix = small_matrix()
    text = km.render_markdown(matrix)
    parsed = prove.parse_markdown(text)
    for name in ("fixtures", "kills", "needs_neighbours", "warnings"):
        assert getattr(parsed.matrix, name) == getattr(matrix, name), name
    assert parsed.matrix.baseline_failures == {"python": ["values.broken"]}  # none: not listed
    assert parsed.matrix.recommended_only == {"out-of-turn-answers-dropped": "D-OUT-OF-TURN"}
    assert prove.render(parsed) == text  # the timing line kept, nothing else moved


def test_an_unreadable_matrix_is_one_line_exit_2() -> None:
    with pytest.raises(prove.ProveError) as caught:
        prove.parse_markdown("# Mutant kill matrix\n\nnothing here\n")
    assert caught.value.status == 2 and "regenerate it in full" in str(caught.value)


def test_a_row_whose_count_disagrees_with_its_list_is_refused() -> None:
    text = km.render_markdown(small_matrix()).replace(f"| 1 | `{KNOWN}` |", f"| 2 | `{KNOWN}` |")
    with pytest.raises(prove.ProveError) as caught:
        prove.parse_markdown(text)
    assert "the row of base64-padding-optional counts 2 kills but lists 1" in str(caught.value)


def test_merge_changes_only_the_named_fixtures_cells() -> None:
    parsed = prove.parse_markdown(km.render_markdown(small_matrix()))
    # the changed KNOWN no longer kills base64-padding-optional but kills depth-limit-63 alone;
    # NEW kills base64-padding-optional
    proof = km.KillMatrix(
        fixtures=[KNOWN, NEW],
        baseline_failures={"python": [], "node": []},
        kills={
            "base64-padding-optional": [NEW],
            "depth-limit-63": [KNOWN],
            "out-of-turn-answers-dropped": [],
            "attempt-off-by-one": [NEW],  # no row yet: only a full regeneration writes one
        },
        seconds=3.0,
        unapplicable={},
        warnings={"out-of-turn-answers-dropped": [NEW]},
        # a session of the named fixtures only says nothing of the corpus as neighbours
        needs_neighbours={"base64-padding-optional": [KNOWN]},
    )
    prove.merge(parsed, proof, [KNOWN, NEW])
    matrix = parsed.matrix
    assert matrix.kills["base64-padding-optional"] == [NEW]
    assert "attempt-off-by-one" not in matrix.kills
    assert matrix.kills["depth-limit-63"] == sorted(["values.depth-64-accepted", KNOWN])
    assert matrix.warnings["out-of-turn-answers-dropped"] == sorted(["values.idle", NEW])
    assert "depth-limit-63" not in matrix.needs_neighbours  # it fails alone now
    assert "base64-padding-optional" not in matrix.needs_neighbours
    assert matrix.baseline_failures["python"] == ["values.broken"]
    text = prove.render(parsed)
    assert "3 mutants, 5 fixtures, 0 surviving mutants; " in text
    assert "Regeneration: built in 1493 s: shared sessions 871 s" in text
    assert "| `depth-limit-63` | python |" in text and f"| 2 | `{KNOWN}`, `values.depth" in text
    assert text.endswith(
        "## Fixtures that kill no mutant (1)\n\n" + _idle_intro() + "- `values.idle`\n"
    )


def test_add_rows_writes_a_new_mutants_row_over_the_whole_corpus(monkeypatch) -> None:
    parsed = prove.parse_markdown(km.render_markdown(small_matrix()))
    played: list = []

    def whole_corpus(names, fixtures, jobs, timeout):  # noqa: ANN001, ANN202 - the stub's
        played.append((list(names), len(fixtures)))
        return km.KillMatrix(
            fixtures=sorted([KNOWN, NEW, "values.depth-64-accepted"]),
            baseline_failures={"python": [], "node": [NEW]},  # values.broken passed this time
            kills={"attempt-off-by-one": [KNOWN, NEW]},
            seconds=9.0,
            unapplicable={},
            warnings={"attempt-off-by-one": ["values.depth-64-accepted"]},
            needs_neighbours={},
        )

    monkeypatch.setattr(km, "build_kill_matrix", whole_corpus)
    monkeypatch.setattr(prove, "load_fixtures", lambda: ["f"] * 7)
    assert prove.add_rows(parsed, [], jobs=1, timeout=1.0) is None and not played
    prove.add_rows(parsed, ["attempt-off-by-one"], jobs=1, timeout=1.0)
    assert played == [(["attempt-off-by-one"], 7)]  # the whole corpus, that mutant alone
    matrix = parsed.matrix
    assert matrix.kills["attempt-off-by-one"] == [KNOWN, NEW]
    assert matrix.warnings["attempt-off-by-one"] == ["values.depth-64-accepted"]
    assert matrix.kills["base64-padding-optional"] == [KNOWN]  # other rows untouched
    assert NEW in matrix.fixtures
    assert matrix.baseline_failures == {"python": ["values.broken"], "node": [NEW]}  # a union
    assert "4 mutants, 5 fixtures, " in prove.render(parsed)


def test_an_old_needs_neighbours_entry_stays_while_the_fixture_passes_alone() -> None:
    parsed = prove.parse_markdown(km.render_markdown(small_matrix()))
    proof = km.KillMatrix(
        fixtures=[KNOWN],
        baseline_failures={"python": []},
        kills={"base64-padding-optional": [KNOWN], "depth-limit-63": []},
        seconds=1.0,
        unapplicable={},
    )
    prove.merge(parsed, proof, [KNOWN])
    assert parsed.matrix.needs_neighbours == {"depth-limit-63": [KNOWN]}
    assert parsed.matrix.kills["depth-limit-63"] == ["values.depth-64-accepted"]


def _idle_intro() -> str:
    return (
        "Questions worth asking for each: which plausible SDK bug does it catch that no mutant\n"
        "models (then add that mutant), or does it duplicate another fixture?\n\n"
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throw-away checkout with one new fixture (a copy of KNOWN under another id)."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(ROOT / "fixtures", root / "fixtures")
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "matrix.json", root / "matrix.json")
    for linked in ("runners", "tests", "fakepeer"):
        (root / linked).symlink_to(ROOT / linked)
    source = (root / "fixtures" / "values" / f"{KNOWN}.json").read_text(encoding="utf-8")
    (root / "fixtures" / "values" / f"{NEW}.json").write_text(
        source.replace(KNOWN, NEW), encoding="utf-8"
    )
    wrong = source.replace(KNOWN, WRONG).replace(
        '"retryable": false,', '"retryable": false, "message": "no SDK words it so",'
    )
    wrong = wrong.replace('"vary": ["/body/error/message"]', '"vary": []')
    (root / "fixtures" / "values" / f"{WRONG}.json").write_text(wrong, "utf-8")
    return root


def _prove(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = [sys.executable, "-m", "fakepeer", "fixtures", "prove", *args]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_proving_a_new_fixture_updates_its_rows_and_matrix_json(checkout: Path) -> None:
    matrix = small_matrix()
    matrix.fixtures = sorted([*matrix.fixtures])
    kill_file = checkout / "KILL.md"
    kill_file.write_text(km.render_markdown(matrix), encoding="utf-8")
    before = json.loads((checkout / "matrix.json").read_text(encoding="utf-8"))["count"]
    done = _prove(
        checkout,
        NEW,
        "--mutant",
        "base64-padding-optional",
        "--mutant",
        "depth-limit-63",
        "--kill-matrix",
        str(kill_file),
    )
    assert done.returncode == 0, done.stderr + done.stdout
    text = kill_file.read_text(encoding="utf-8")
    assert (
        f"| `base64-padding-optional` | python | {km.fault_of('base64-padding-optional')} | 2 |"
        in text
    )
    assert f"`{KNOWN}`, `{NEW}` |" in text
    assert "| 1 | `values.depth-64-accepted` |" in text
    assert "3 mutants, 5 fixtures, " in text
    assert "Regeneration: built in 1493 s" in text
    assert "incrementally" in done.stdout
    assert f"{NEW}: passes on both SDKs; kills 1 mutant(s): base64-padding-optional" in done.stdout
    after = json.loads((checkout / "matrix.json").read_text(encoding="utf-8"))["count"]
    assert after == before + 2  # NEW and the wrong fixture below, both in the corpus now


def test_a_fixture_a_reference_sdk_fails_stops_with_its_reason(checkout: Path) -> None:
    kill_file = checkout / "KILL-wrong.md"
    text = km.render_markdown(small_matrix())
    kill_file.write_text(text, encoding="utf-8")
    done = _prove(checkout, WRONG, "--kill-matrix", str(kill_file))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ryusen-conform fixtures prove: {WRONG} does not pass on ")
    assert "runners/python/conform: fail: /body/error/message" in last
    assert kill_file.read_text(encoding="utf-8") == text
    assert "Traceback" not in done.stderr


def test_an_unknown_fixture_is_one_line_exit_2(checkout: Path) -> None:
    done = _prove(checkout, "values.no-such-fixture")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(f"values.no-such-fixture is no fixture of {checkout / 'fixtures'}")
    )


def test_outside_a_checkout_it_says_so_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "fakepeer", "fixtures", "prove", KNOWN]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "needs the repository's tests/mutants" in done.stderr


def test_an_http_fixture_must_pass_both_reference_sdks_over_http_too() -> None:
    http = load_fixtures([ROOT / "fixtures" / "http" / "http.altered-body-refused.json"])
    framed = load_fixtures([ROOT / "fixtures" / "values" / f"{KNOWN}.json"])
    labels = [target.label for target in prove.reference_targets(http)]
    assert [label.startswith("http+cmd:") for label in labels] == [False, False, True, True]
    assert labels[2].endswith("runners/python/conform --http")
    assert labels[3].endswith("runners/node/conform --http")
    assert len(prove.reference_targets(framed)) == 2


def test_the_summary_warns_of_a_fixture_that_kills_no_mutant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    proof = km.KillMatrix(
        fixtures=[KNOWN, NEW],
        baseline_failures={"python": []},
        kills={"base64-padding-optional": [KNOWN], "depth-limit-63": []},
        seconds=1.0,
        unapplicable={},
    )
    assert prove.summarize([KNOWN, NEW], proof, 2.0) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{KNOWN}: passes on both SDKs; kills 1 mutant(s): base64-padding-optional"
    assert out[1] == f"{NEW}: passes on both SDKs; kills 0 mutant(s)"
    assert out[2] == f"warning: {NEW} kills no mutant: {prove.IDLE_ADVICE}"
    assert "every fixture must be able to fail: add a mutant it kills" in out[2]


def test_a_fixture_validate_refuses_stops_there_exit_2(checkout: Path) -> None:
    source = (checkout / "fixtures" / "values" / f"{KNOWN}.json").read_text(encoding="utf-8")
    bad = checkout / "fixtures" / "values" / "values.unknown-decision.json"
    bad.write_text(
        source.replace(KNOWN, "values.unknown-decision").replace("D-BYTES-BASE64", "D-NO-SUCH"),
        encoding="utf-8",
    )
    kill_file = checkout / "KILL-validate.md"
    kill_file.write_text(km.render_markdown(small_matrix()), encoding="utf-8")
    try:
        done = _prove(checkout, "values.unknown-decision", "--kill-matrix", str(kill_file))
    finally:
        bad.unlink()
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ryusen-conform fixtures prove: ")
    assert "D-NO-SUCH" in last and ("fixtures validate: " in last or "/rule/decision" in last)
