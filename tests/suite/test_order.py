"""Order independence (issue 20): `--shuffle [SEED]` plays cases in a seeded random order,
`--isolate` on a fresh host each; reports keep fixture-id order and say how the cases ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakepeer.suite import RunOptions, run_suite
from fakepeer.suite.order import MAX_SEED, bare_shuffle_argv, parse_seed, play_order
from tests.support.helpers import echo_scenario, run_cli
from tests.support.mock_sdk import MockSdk


def test_a_seed_fixes_the_order() -> None:
    items = list(range(50))
    assert play_order(items, 7) == play_order(items, 7) != items
    assert play_order(items, 7) != play_order(items, 8)
    assert sorted(play_order(items, 7)) == items
    assert play_order(items, None) == items


@pytest.mark.parametrize("text", ["-1", "x", "1.5", str(MAX_SEED + 1), "", " 3", "+3"])
def test_a_bad_seed_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="--shuffle takes a whole number"):
        parse_seed(text)


def test_a_bare_shuffle_gets_a_new_seed() -> None:
    assert 0 <= parse_seed("random") <= MAX_SEED
    assert parse_seed("0") == 0
    assert bare_shuffle_argv(["run", "--shuffle"]) == ["run", "--shuffle=random"]
    assert bare_shuffle_argv(["run", "--shuffle", "-k", "x"])[1] == "--shuffle=random"
    assert bare_shuffle_argv(["run", "--shuffle", "12"]) == ["run", "--shuffle", "12"]


def test_shuffled_cases_are_reported_in_fixture_order() -> None:
    fixtures = [echo_scenario(f"c{n:02d}").build() for n in range(12)]
    played: list[str] = []
    run = run_suite(
        [MockSdk().target("mock")],
        fixtures,
        RunOptions(shuffle_seed=3),
        on_result=lambda _target, result: played.append(result.id),
    )
    ids = [case.id for case in run.sdks[0].results]
    assert ids == sorted(ids) and played != ids and sorted(played) == ids
    assert run.shuffle_seed == 3 and run.exit_status() == 0


def test_isolate_starts_a_fresh_host_per_case(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = run_cli("run", "--isolate", "--shuffle", "5", "-k", "echo", "--report-json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cases shuffled with seed 5 (replay the order: --shuffle 5)" in done.stdout
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["order"] == {"shuffle_seed": 5, "isolate": True}
    sdk = document["sdks"][0]
    assert sdk["process_starts"] == len(sdk["cases"]) > 1


def test_a_bad_seed_is_a_usage_error() -> None:
    done = run_cli("run", "--shuffle", "nope", "-k", "echo")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("ryusen-conform: error: --shuffle")
