"""Known failures as protobuf's runner keeps them: one list per SDK, applied once after the run.

A listed failure is xfail; a listed pass (xpass) and a listed id that names no fixture fail the
run unless --lenient; --update-failures rewrites the lists to what the run saw.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakepeer.session import Outcome
from fakepeer.suite import RunOptions, run_suite
from fakepeer.suite import known_failures as known
from fakepeer.suite.known_failures import KnownFailuresError
from tests.cli.test_cli import conform, last_line, sdk_args
from tests.support.helpers import echo_scenario
from tests.support.mock_sdk import MockSdk


def _run(*run_ids: str, labels: tuple[str, ...] = ("mock",)):
    fixtures = [echo_scenario(run_id).build() for run_id in run_ids]
    return run_suite([MockSdk().target(label) for label in labels], fixtures, RunOptions())


def test_results_keep_their_raw_outcome_until_the_lists_are_applied(tmp_path: Path) -> None:
    run = _run("ok", "wrong-value", "crash")
    assert [c.outcome for c in run.sdks[0].results] == [c.raw_outcome for c in run.sdks[0].results]
    listed = tmp_path / "known.txt"
    listed.write_text("t.wrong-value  # value differs\nt.crash\nt.ok # fixed since\n")
    known.apply(run, known.read_lists([str(listed)], ["mock"]))
    outcomes = {c.id: (c.outcome, c.raw_outcome) for c in run.sdks[0].results}
    assert outcomes == {
        "t.crash": (Outcome.XFAIL, Outcome.ERROR),
        "t.ok": (Outcome.XPASS, Outcome.PASS),
        "t.wrong-value": (Outcome.XFAIL, Outcome.FAIL),
    }
    assert run.exit_status() == 1, "a listed fixture that passes fails the run"
    run.lenient = True
    assert run.exit_status() == 0


def test_one_list_per_sdk_by_label_or_by_section(tmp_path: Path) -> None:
    run = _run("wrong-value", labels=("a", "b=c", "d"))
    only_a = tmp_path / "a.txt"
    only_a.write_text("t.wrong-value\n")
    sections = tmp_path / "many.txt"
    sections.write_text("# lists of two SDKs\n[b=c]\nt.wrong-value  # b fails it too\n[d]\n")
    lists = known.read_lists([f"a={only_a}", str(sections)], ["a", "b=c", "d"])
    assert set(lists.lists) == {"a", "b=c", "d"}
    assert lists.lists["b=c"].entries == {"t.wrong-value": "b fails it too"}
    known.apply(run, lists)
    assert [sdk.results[0].outcome for sdk in run.sdks] == [
        Outcome.XFAIL,
        Outcome.XFAIL,
        Outcome.FAIL,
    ]


def test_a_path_with_an_equals_sign_is_a_path_unless_it_starts_with_a_label(
    tmp_path: Path,
) -> None:
    odd = tmp_path / "x=y.txt"
    odd.write_text("t.ok\n")
    lists = known.read_lists([str(odd)], ["mock"])
    assert lists.for_sdk("mock").entries == {"t.ok": ""}


def test_bad_lists_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("t.ok\nt.a t.b\n")
    with pytest.raises(KnownFailuresError, match=r"bad.txt:2: expected one fixture id"):
        known.read_lists([str(bad)], [])
    with pytest.raises(KnownFailuresError, match="cannot read --known-failures"):
        known.read_lists([str(tmp_path / "missing.txt")], [])
    twice = tmp_path / "twice.txt"
    twice.write_text("t.ok\n")
    with pytest.raises(KnownFailuresError, match="already has a list"):
        known.read_lists([str(twice), str(twice)], [])


def test_a_listed_id_that_is_no_fixture_is_a_problem(tmp_path: Path) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("t.ok\nt.gone  # renamed long ago\n")
    lists = known.read_lists([str(listed)], ["mock"])
    (problem,) = known.problems(lists, {"t.ok"})
    assert "lists t.gone, which is not a loaded fixture" in problem


def test_update_rewrites_from_raw_outcomes_keeping_reasons_and_unrun_ids(tmp_path: Path) -> None:
    run = _run("ok", "wrong-value", "crash")
    listed = tmp_path / "known.txt"
    listed.write_text("t.ok\nt.crash  # our own words\nt.other  # not run today\nt.gone\n")
    lists = known.read_lists([str(listed)], ["mock"])
    known.apply(run, lists)
    corpus = {"t.ok", "t.wrong-value", "t.crash", "t.other"}
    assert known.update(run, lists, corpus) == [listed]
    assert listed.read_text().splitlines() == [
        "t.crash  # our own words",
        "t.other  # not run today",
        't.wrong-value  # /body/value/v: expected "hi", got "surprise"',
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["known.txt"], "no temporary file is left"


def test_update_keeps_the_sections_of_a_keyed_file(tmp_path: Path) -> None:
    run = _run("wrong-value", labels=("a", "b"))
    keyed = tmp_path / "keyed.txt"
    keyed.write_text("[a]\n[b]\nt.ok\n")
    lists = known.read_lists([str(keyed)], ["a", "b"])
    known.update(run, lists, {"t.ok", "t.wrong-value"})
    text = keyed.read_text()
    assert text == (
        '[a]\nt.wrong-value  # /body/value/v: expected "hi", got "surprise"\n'
        '[b]\nt.ok\nt.wrong-value  # /body/value/v: expected "hi", got "surprise"\n'
    ), "t.ok did not run: it stays listed"


# ----------------------------------------------------------------------------- the CLI


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    for run_id in ("ok", "wrong-value", "crash"):
        echo_scenario(run_id).write(root)
    return root


def test_cli_listed_pass_and_unknown_id_fail_unless_lenient(
    tmp_path: Path, small_corpus: Path
) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("t.wrong-value\nt.crash\n")
    clean = conform("run", *sdk_args(small_corpus), "--known-failures", str(listed))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert last_line(clean.stdout) == "1 passed, 0 failed, 2 xfailed"

    listed.write_text("t.wrong-value\nt.crash\nt.ok  # passes now\n")
    xpass = conform("run", *sdk_args(small_corpus), "--known-failures", str(listed))
    assert xpass.returncode == 1
    assert "XPASS t.ok" in xpass.stdout
    assert last_line(xpass.stdout) == "0 passed, 0 failed, 2 xfailed, 1 xpassed"
    lenient = conform("run", *sdk_args(small_corpus), "--known-failures", str(listed), "--lenient")
    assert lenient.returncode == 0, lenient.stdout

    listed.write_text("t.wrong-value\nt.crash\nt.no-such-fixture\n")
    unknown = conform("run", *sdk_args(small_corpus), "--known-failures", str(listed))
    assert unknown.returncode == 1
    assert "lists t.no-such-fixture, which is not a loaded fixture" in unknown.stdout
    assert last_line(unknown.stdout) == "1 passed, 0 failed, 2 xfailed, 1 known-failure list error"
    assert (
        conform(
            "run", *sdk_args(small_corpus), "--known-failures", str(listed), "--lenient"
        ).returncode
        == 0
    )


def test_cli_update_failures_rewrites_the_list(tmp_path: Path, small_corpus: Path) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("t.ok  # was flaky\nt.no-such-fixture\n")
    result = conform(
        "run", *sdk_args(small_corpus), "--known-failures", str(listed), "--update-failures"
    )
    assert result.returncode == 1  # the run itself still reports what happened
    assert f"updated the known failures in {listed}" in result.stdout
    assert listed.read_text().splitlines() == [
        "t.crash  # crashed: closed its output; exited with status 3",
        't.wrong-value  # /body/value/v: expected "hi", got "not what you asked"',
    ]
    again = conform("run", *sdk_args(small_corpus), "--known-failures", str(listed))
    assert again.returncode == 0, again.stdout + again.stderr


def test_cli_update_failures_needs_a_list(small_corpus: Path) -> None:
    result = conform("run", *sdk_args(small_corpus), "--update-failures")
    assert result.returncode == 2
    assert "--update-failures rewrites the --known-failures lists" in result.stderr


# ----------------------------------------------------------------------------- issue 22 (1, 2, 5)


def test_a_section_that_matches_no_sdk_is_an_error(tmp_path: Path) -> None:
    keyed = tmp_path / "keyed.txt"
    keyed.write_text("[./old/path/conform]\nt.wrong-value\n")
    with pytest.raises(
        KnownFailuresError, match=r"section \[./old/path/conform\] matches no --sdk"
    ):
        known.read_lists([str(keyed)], ["./new/path/conform"])


def test_cli_a_detached_section_is_a_usage_error(tmp_path: Path, small_corpus: Path) -> None:
    keyed = tmp_path / "keyed.txt"
    keyed.write_text("[somebody-else]\nt.wrong-value\n")
    result = conform("run", *sdk_args(small_corpus), "--known-failures", str(keyed))
    assert result.returncode == 2
    assert "section [somebody-else] matches no --sdk" in result.stderr


def test_update_keeps_comments_in_place_and_writes_the_finding(tmp_path: Path) -> None:
    run = _run("ok", "wrong-value", "crash")
    listed = tmp_path / "known.txt"
    listed.write_text(
        "# Known failures of our SDK: see ticket 42\n"
        "\n"
        "t.crash  # our own words\n"
        "# fixed last week:\n"
        "t.ok\n"
    )
    lists = known.read_lists([str(listed)], ["mock"])
    known.update(run, lists, {"t.ok", "t.wrong-value", "t.crash"})
    assert listed.read_text().splitlines() == [
        "# Known failures of our SDK: see ticket 42",
        "",
        "t.crash  # our own words",
        "# fixed last week:",
        't.wrong-value  # /body/value/v: expected "hi", got "surprise"',
    ]


def test_merge_carries_list_errors_and_is_never_greener_than_a_shard(
    tmp_path: Path, small_corpus: Path
) -> None:
    listed = tmp_path / "known.txt"
    listed.write_text("t.wrong-value\nt.crash\nt.no-such-fixture\n")
    for shard in (1, 2):
        conform(
            "run",
            *sdk_args(small_corpus),
            "--known-failures",
            str(listed),
            "--shard",
            f"{shard}/2",
            "--report-json",
            str(tmp_path / f"s{shard}.json"),
        )
    merged = conform(
        "merge",
        str(tmp_path / "s1.json"),
        str(tmp_path / "s2.json"),
        "--markdown",
        str(tmp_path / "m.md"),
        "--junit",
        str(tmp_path / "j.xml"),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert merged.returncode == 1, merged.stdout
    assert "lists t.no-such-fixture, which is not a loaded fixture" in merged.stdout
    assert last_line(merged.stdout).endswith(", 1 known-failure list error")
    for report in ("m.md", "j.xml", "r.html"):
        assert "t.no-such-fixture" in (tmp_path / report).read_text(), report


def test_merge_is_never_greener_than_a_shard_and_has_no_lenient(
    tmp_path: Path, small_corpus: Path
) -> None:
    import json

    listed = tmp_path / "known.txt"
    listed.write_text("t.wrong-value\nt.crash\n")
    for shard in (1, 2):
        conform(
            *("run", *sdk_args(small_corpus), "--known-failures", str(listed)),
            *("--shard", f"{shard}/2", "--report-json", str(tmp_path / f"s{shard}.json")),
        )
    first = tmp_path / "s1.json"
    document = json.loads(first.read_text())
    document["exit_status"] = 3  # a shard that exited 3 (no verdict), whatever its cases say
    first.write_text(json.dumps(document))
    merged = conform("merge", str(first), str(tmp_path / "s2.json"))
    assert merged.returncode == 3, merged.stdout + merged.stderr
    assert "exited 3: the merged run is no greener" in merged.stdout
    assert "--lenient" not in conform("merge", "--help").stdout
    assert "--lenient" in conform("run", "--help").stdout
