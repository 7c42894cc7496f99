"""A lifecycle scenario's `callbacks` (how many times each callback started, from the effect
traces of §12.4) is checked: a wrong count, an unnamed callback that ran, or a start lost with a
killed host counted anyway each fail the case. Played in-process against the Python reference host.
"""

from __future__ import annotations

import copy
import json

import pytest

from fakepeer.cases.lifecycle import lifecycle_fixture
from fakepeer.cases.loader import repository_root
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import command_target
from fakepeer.suite import RunOptions, run_suite

REFERENCE = "python:runners/python:conform_host.host:serve"


def _scenario(name: str) -> dict:
    path = repository_root() / "fixtures" / "lifecycle" / f"lifecycle.{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _play(document: dict) -> tuple[str, list]:
    fixture = lifecycle_fixture(document)
    result = run_suite(
        [command_target(REFERENCE)],
        [fixture],
        RunOptions(timeout=20, lifecycle_player=play_lifecycle),
    )
    ((case,),) = [sdk.results for sdk in result.sdks]
    return case.raw_outcome.value, case.findings


def _with_callbacks(document: dict, callbacks: dict[str, int]) -> dict:
    changed = copy.deepcopy(document)
    changed["lifecycle"]["expect"]["callbacks"] = callbacks
    return changed


def test_the_stated_counts_pass() -> None:
    outcome, findings = _play(_scenario("lost-forward-answer-redelivered"))
    assert (outcome, findings) == ("pass", [])


@pytest.mark.parametrize(
    ("name", "callbacks", "pointer", "expected", "actual"),
    [
        # a lost answer still ran its callback: two starts, not one
        (
            "lost-forward-answer-redelivered",
            {"main a forward": 1},
            "/lifecycle/expect/callbacks/main a forward",
            1,
            2,
        ),
        # a callback the scenario does not name must not have started
        (
            "saga-completes",
            {"main reserve forward": 1, "main charge forward": 1},
            "/lifecycle/expect/callbacks/main notify forward",
            0,
            1,
        ),
        # starts in a host killed mid-invocation are not counted: its trace died with it
        (
            "saga-charge-host-killed-compensates-reserve",
            {
                "main reserve forward": 1,
                "main charge forward": 5,
                "main reserve compensation": 1,
            },
            "/lifecycle/expect/callbacks/main charge forward",
            5,
            0,
        ),
    ],
)
def test_a_wrong_count_fails_the_case(
    name: str, callbacks: dict[str, int], pointer: str, expected: int, actual: int
) -> None:
    outcome, findings = _play(_with_callbacks(_scenario(name), callbacks))
    assert outcome == "fail"
    assert [(f.kind, f.pointer, f.expected, f.actual) for f in findings] == [
        ("trace", pointer, expected, actual)
    ]
