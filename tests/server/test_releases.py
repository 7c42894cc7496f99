"""Release records, connections and connected routing (fakepeer/server/releases.py)."""

from __future__ import annotations

import copy

from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.server.releases import Refused, ReleaseRegistry, Requirement, phantom_body

from .fakes import register_body

NEED = Requirement("f")


def _unversioned(instance: str, group: str = "unversioned:sha256:" + "1" * 64) -> dict:
    body = register_body(["f"], instance)
    body["release"] = {"kind": "unversioned", "group": group}
    return body


def test_first_registration_records_a_commit_position_kept_on_reconnect() -> None:
    registry = ReleaseRegistry()
    old = registry.register(CONFORM_SCOPE, register_body(["f"], "i-1", "zzz-old"))
    new = registry.register(CONFORM_SCOPE, register_body(["f"], "i-2", "aaa-new"))
    assert not isinstance(old, Refused) and not isinstance(new, Refused)
    assert (old.release.commit_position, new.release.commit_position) == (1, 2)
    registry.disconnect("i-1")
    again = registry.register(CONFORM_SCOPE, register_body(["f"], "i-1", "zzz-old"))
    assert not isinstance(again, Refused)
    assert again.release.commit_position == 1  # a reconnect does not reorder releases
    # newest by commit position, not by the (sortable) release ID
    assert registry.route(CONFORM_SCOPE, NEED).instance_id == "i-2"  # type: ignore[union-attr]


def test_release_record_is_coordination_metadata_only() -> None:
    registry = ReleaseRegistry()
    connection = registry.register(CONFORM_SCOPE, register_body(["f"]))
    assert not isinstance(connection, Refused)
    record = connection.release
    assert set(vars(record)) == {
        "scope",
        "key",
        "versioned",
        "contract",
        "functions",
        "commit_position",
    }


def test_connections_are_ephemeral_and_affect_dispatch_only() -> None:
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"]))
    registry.disconnect("i-1")
    assert registry.route(CONFORM_SCOPE, NEED) is None  # work stays queued
    assert len(registry.releases) == 1  # the release record stays


def test_routing_needs_exact_scope_and_a_compatible_contract() -> None:
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"]))
    other_app = {**CONFORM_SCOPE, "application_id": "app-other"}
    assert registry.route(other_app, NEED) is None
    assert registry.route(CONFORM_SCOPE, Requirement("g")) is None  # function not served
    assert registry.route(CONFORM_SCOPE, Requirement("f", capabilities=frozenset({"x"}))) is None
    assert registry.route(CONFORM_SCOPE, NEED) is not None


def test_routing_honours_capacity_and_history_requirements() -> None:
    """A worker with no free slot, or without a capability the run's history needs, is passed
    over even when its release is the newest."""
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"]))
    busy = phantom_body(register_body(["f"]), {"instance": "i-2", "release": "rel-2", "busy": 1})
    registry.register(CONFORM_SCOPE, busy)
    assert registry.route(CONFORM_SCOPE, NEED).instance_id == "i-1"
    bare = phantom_body(
        register_body(["f"]), {"instance": "i-3", "release": "rel-3", "capabilities": []}
    )
    registry.register(CONFORM_SCOPE, bare)
    assert registry.route(CONFORM_SCOPE, NEED).instance_id == "i-3"  # newest, nothing needed
    timers = Requirement("f", capabilities=frozenset({"timers"}))
    assert registry.route(CONFORM_SCOPE, timers).instance_id == "i-1"


def test_a_run_targets_the_function_so_the_newest_release_serves_it() -> None:
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"], "old-1", "rel-1"))
    assert registry.route(CONFORM_SCOPE, NEED).instance_id == "old-1"  # type: ignore[union-attr]
    registry.register(CONFORM_SCOPE, register_body(["f"], "new-1", "rel-2"))
    assert registry.route(CONFORM_SCOPE, NEED).instance_id == "new-1"  # type: ignore[union-attr]


def test_older_release_is_a_fallback_until_it_drains() -> None:
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"], "old-1", "rel-1"))
    new = register_body(["f"], "new-1", "rel-2")
    new["contract"] = {**new["contract"], "capabilities": ["timers"]}
    registry.register(CONFORM_SCOPE, new)
    need_plain = NEED
    # the newest release is preferred ...
    assert registry.route(CONFORM_SCOPE, need_plain).instance_id == "new-1"  # type: ignore[union-attr]
    registry.drain("new-1")
    # ... and the older compatible one serves as fallback; once it drains, nothing does
    assert registry.route(CONFORM_SCOPE, need_plain).instance_id == "old-1"  # type: ignore[union-attr]
    registry.drain("old-1")
    assert registry.route(CONFORM_SCOPE, need_plain) is None


def test_newest_release_is_balanced_across_its_healthy_instances() -> None:
    registry = ReleaseRegistry()
    for instance in ("a", "b"):
        registry.register(CONFORM_SCOPE, register_body(["f"], instance, "rel-1"))
    chosen = {registry.route(CONFORM_SCOPE, NEED).instance_id for _ in range(4)}  # type: ignore[union-attr]
    assert chosen == {"a", "b"}


def test_identified_release_preferred_over_unversioned_group() -> None:
    registry = ReleaseRegistry()
    registry.register(CONFORM_SCOPE, register_body(["f"], "v-1", "rel-1"))
    registry.register(CONFORM_SCOPE, _unversioned("u-1"))  # registered later
    assert {registry.route(CONFORM_SCOPE, NEED).instance_id for _ in range(4)} == {"v-1"}  # type: ignore[union-attr]
    registry.disconnect("v-1")
    registry.register(CONFORM_SCOPE, _unversioned("u-2", "unversioned:sha256:" + "2" * 64))
    assert {registry.route(CONFORM_SCOPE, NEED).instance_id for _ in range(4)} == {"u-1", "u-2"}  # type: ignore[union-attr]


def test_conflicting_contract_and_foreign_scope_are_refused() -> None:
    registry = ReleaseRegistry()
    body = register_body(["f"])
    registry.register(CONFORM_SCOPE, body)
    conflicting = copy.deepcopy(body)
    conflicting["contract"]["value_codec"] = "other/1"
    assert registry.register(CONFORM_SCOPE, conflicting) == Refused("conflicting_release")
    foreign = {**CONFORM_SCOPE, "application_id": "app-other"}
    assert registry.register(foreign, body) == Refused("unauthorized_scope")
