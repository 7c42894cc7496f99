"""Every lifecycle scenario names its own root run (issue 20): `run-<fixture id>`, never the
shared `run-1`, so state a host keeps per run cannot carry from one scenario into the next."""

from __future__ import annotations

import json

from fakepeer.cases import default_fixture_dir
from fakepeer.server.lifecycle import scenario_run_id
from fakepeer.server.loop import ROOT_RUN_ID, ModelServer

from .fakes import FakeLink, steps_then_complete

NULL = {"t": "null"}


def test_the_model_server_starts_the_root_run_it_is_given() -> None:
    link = FakeLink(steps_then_complete("a"))
    report = ModelServer(link, root_run_id="run-lifecycle.x").simulate("f", NULL)
    assert report.root.run_id == "run-lifecycle.x"
    assert {body["run_id"] for body in link.sent} == {"run-lifecycle.x"}
    assert ModelServer(FakeLink(steps_then_complete())).simulate("f", NULL).root.run_id == (
        ROOT_RUN_ID
    )


def test_no_lifecycle_fixture_spells_the_shared_root_run() -> None:
    """Their expectations spell the scenario's own run id (scripts/distinct_run_ids.py)."""
    shared = []
    for path in sorted((default_fixture_dir() / "lifecycle").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        if '"run-1"' in text or "op:run-1:" in text:
            shared.append(path.name)
    assert not shared, f"lifecycle fixtures still naming run-1: {shared}"


def test_scenario_run_ids_are_distinct() -> None:
    paths = sorted((default_fixture_dir() / "lifecycle").glob("*.json"))
    ids = [scenario_run_id(json.loads(p.read_text(encoding="utf-8"))["id"]) for p in paths]
    assert len(ids) == len(set(ids)) > 0
