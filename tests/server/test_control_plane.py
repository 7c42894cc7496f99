"""Manifest publication and event routing as the model server uses them (protocol §8.5)."""

from __future__ import annotations

from fakepeer.protocol.manifest import Activation, Conflict, ManifestStore, Unauthorized
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.server.loop import ModelServer
from fakepeer.server.script import ScriptItem

from .fakes import FakeLink, publication, steps_then_complete

OTHER_APP = {"workspace_id": CONFORM_SCOPE["workspace_id"], "application_id": "app-other"}
FUNCTIONS = [{"id": "f"}, {"id": "g", "timeout_ms": "1000"}]
TRIGGERS = [{"id": "t", "event": "go", "function": "f"}]


def _for(scope: dict, body: dict) -> dict:
    return {**body, "scope": dict(scope)}


def test_publication_activates_both_heads_with_the_complete_declarations() -> None:
    store = ManifestStore()
    body = publication(FUNCTIONS, TRIGGERS)
    result = store.publish(CONFORM_SCOPE, body)
    assert isinstance(result, Activation)
    generation = store.application_generations(CONFORM_SCOPE)[0]
    assert [f.id for f in generation.functions] == ["f", "g"]
    assert [t.id for t in generation.triggers] == ["t"]
    head = store.workspace_head(CONFORM_SCOPE["workspace_id"])
    assert head is not None and head.generation_id == result.workspace_generation
    assert head.applications == {CONFORM_SCOPE["application_id"]: result.application_generation}
    assert set(head.to_json()) == {
        "workspace_id",
        "generation_id",
        "expected_parent",
        "content_hash",
        "commit_order",
        "applications",
    }


def test_a_manifest_is_one_applications_complete_set() -> None:
    store = ManifestStore()
    mine = store.publish(CONFORM_SCOPE, publication(FUNCTIONS, TRIGGERS))
    other = store.publish(OTHER_APP, _for(OTHER_APP, publication([{"id": "h"}], [])))
    assert isinstance(mine, Activation) and isinstance(other, Activation)
    head = store.workspace_head(CONFORM_SCOPE["workspace_id"])
    assert head is not None
    assert head.applications == {
        CONFORM_SCOPE["application_id"]: mine.application_generation,
        "app-other": other.application_generation,
    }
    # the other application's publication did not touch this one's functions
    assert [f.id for f in store.application_generations(CONFORM_SCOPE)[0].functions] == ["f", "g"]


def test_identical_content_is_idempotent_and_a_stale_parent_changes_nothing() -> None:
    store = ManifestStore()
    first = store.publish(CONFORM_SCOPE, publication(FUNCTIONS, TRIGGERS))
    again = store.publish(CONFORM_SCOPE, publication(FUNCTIONS, TRIGGERS))
    assert again == first
    heads = (
        store.active_generation(CONFORM_SCOPE),
        store.workspace_head(CONFORM_SCOPE["workspace_id"]),
    )
    stale = store.publish(CONFORM_SCOPE, publication([{"id": "f"}], []))  # parent None, stale
    assert isinstance(stale, Conflict)
    assert heads == (
        store.active_generation(CONFORM_SCOPE),
        store.workspace_head(CONFORM_SCOPE["workspace_id"]),
    )


def test_authorization_comes_before_any_lookup() -> None:
    store = ManifestStore()
    looked_up = []
    store.before_workspace_cas = lambda _: looked_up.append(True)
    result = store.publish(OTHER_APP, publication(FUNCTIONS, TRIGGERS))
    assert isinstance(result, Unauthorized)
    assert not looked_up and store.workspace_head(CONFORM_SCOPE["workspace_id"]) is None


def test_generation_identity_includes_scope_and_parent() -> None:
    store = ManifestStore()
    mine = store.publish(CONFORM_SCOPE, publication(FUNCTIONS, TRIGGERS))
    other = store.publish(OTHER_APP, _for(OTHER_APP, publication(FUNCTIONS, TRIGGERS)))
    assert isinstance(mine, Activation) and isinstance(other, Activation)
    assert mine.application_generation != other.application_generation
    reparented = publication(FUNCTIONS, TRIGGERS, parent=mine.application_generation)
    later = store.publish(CONFORM_SCOPE, reparented)
    assert isinstance(later, Activation)
    assert later.application_generation != mine.application_generation


def test_workspace_head_conflict_from_another_application_is_rebuilt_internally() -> None:
    store = ManifestStore()
    landed = []

    def concurrent(inner: ManifestStore) -> None:
        if not landed:
            landed.append(True)
            inner.publish(OTHER_APP, _for(OTHER_APP, publication([{"id": "h"}], [])))

    store.before_workspace_cas = concurrent
    result = store.publish(CONFORM_SCOPE, publication(FUNCTIONS, TRIGGERS))
    assert isinstance(result, Activation)
    assert store.cas_retries == 1
    head = store.workspace_head(CONFORM_SCOPE["workspace_id"])
    assert head is not None and set(head.applications) == {"app-conform", "app-other"}


def _server_with(triggers: list[dict]) -> tuple[ModelServer, FakeLink]:
    link = FakeLink(steps_then_complete("a"), functions=FUNCTIONS, triggers=triggers)
    return ModelServer(link), link  # type: ignore[arg-type]


def test_routing_is_frozen_per_event_and_omission_removes_triggers() -> None:
    """An event acknowledged against W1 routes by W1 even after W2 omits the trigger; an event
    acknowledged against W2 no longer starts the omitted trigger's function. Old generations
    stay readable for that fan-out."""
    server, _ = _server_with(TRIGGERS)
    server._publish()  # W1, with the trigger
    w1 = server.routing_generation()
    parent = server.store.active_generation(CONFORM_SCOPE)
    server.store.publish(CONFORM_SCOPE, publication(FUNCTIONS, [], parent=parent))  # W2
    w2 = server.routing_generation()
    assert w1 != w2
    assert [t.function for _, t in server.triggers_at(w1)] == ["f"]
    assert server.triggers_at(w2) == []
    assert [g.generation_id for g in server.store.workspace_generations("ws-conform")] == [w1, w2]


def test_worker_restart_adds_or_removes_no_trigger_and_moves_no_head() -> None:
    server, link = _server_with(TRIGGERS)
    script = [
        ScriptItem(5, "restart"),
        ScriptItem(10, "event", event="go", payload={"t": "bytes", "v": ""}),
    ]
    heads_before: list[object] = []
    original = server._publish

    def publish_and_remember() -> None:
        original()
        heads_before.append(server.routing_generation())

    server._publish = publish_and_remember  # type: ignore[method-assign]
    report = server.simulate("f", {"t": "null"}, script)
    assert link.restarts == 1
    assert server.routing_generation() == heads_before[0]
    assert len(server.store.workspace_generations("ws-conform")) == 1
    assert sorted(run.status for run in report.runs.values()) == ["completed", "completed"]
