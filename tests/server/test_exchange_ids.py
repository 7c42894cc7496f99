"""Lifecycle exchange ids never collide (issue 20): each scenario's ids begin with its fixture id
and one process-wide count numbers them, so two scenarios, or two plays of one, never share an
id (a host's answer cache or a late copy cannot pass for another case's answer)."""

from __future__ import annotations

import json

from fakepeer.cases import load_fixtures
from fakepeer.compare import Comparer
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import Outcome, SdkSession, default_target, run_case


def _sent_ids(wire) -> list[str]:
    return [json.loads(r.payload)["id"] for r in wire if r.direction == "sent"]


def test_two_scenarios_and_two_plays_use_distinct_ids() -> None:
    wanted = ("lifecycle.saga-completes", "lifecycle.wait-times-out")
    fixtures = [f for f in load_fixtures() if f.id in wanted]
    assert len(fixtures) == 2
    session = SdkSession(default_target().factory)
    try:
        seen: list[set[str]] = []
        for fixture in [*fixtures, fixtures[0]]:
            result = run_case(
                session,
                fixture,
                timeout=10.0,
                comparer=Comparer(),
                lifecycle_player=play_lifecycle,
            )
            assert result.raw_outcome is Outcome.PASS, result.reason
            server = [i for i in _sent_ids(result.wire) if "/server." in i]
            assert server and all(i.startswith(f"{fixture.id}/server.") for i in server)
            seen.append(set(server))  # a publication's outcome reuses its exchange's id
    finally:
        session.shutdown()
    flat = [ident for ids in seen for ident in ids]
    assert len(flat) == len(set(flat)), "an exchange id was used by two plays"
