"""Releases, connections and connected routing: which live worker may serve a run's next work.

RFD 2: "The first successful registration of a release records a durable server commit position.
That position, rather than a client timestamp or sortable release ID, orders releases and does
not change when an old worker reconnects." Connections are ephemeral; a release record holds
coordination metadata only. Routing: exact scope match, compatible contract, newest release,
balanced across its healthy instances, older compatible ones as fallback until they drain.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReleaseRecord:
    """Coordination metadata of one release; never an executable artifact."""

    scope: tuple[str, str]
    key: str  # the versioned release ID, or the unversioned group
    versioned: bool
    contract: Mapping[str, Any]
    functions: tuple[str, ...]
    commit_position: int


@dataclass
class Connection:
    """An ephemeral connection record: it affects dispatch availability only."""

    instance_id: str
    scope: tuple[str, str]
    release: ReleaseRecord
    capacity: int
    draining: bool = False
    #: Invocations in flight on this connection; routing never exceeds `capacity` [S56].
    busy: int = 0

    @property
    def free(self) -> bool:
        return self.busy < self.capacity


@dataclass(frozen=True)
class Refused:
    code: str  # register_refused codes (§7.2)


@dataclass(frozen=True)
class Requirement:
    """What the current contract and durable history need from a worker."""

    function_id: str
    protocol_major: int = 1
    value_codec: str = "ryusen.tagged/1"
    capabilities: frozenset[str] = frozenset()


def _scope(scope: Mapping[str, Any]) -> tuple[str, str]:
    return (str(scope.get("workspace_id", "")), str(scope.get("application_id", "")))


@dataclass
class ReleaseRegistry:
    releases: dict[tuple[str, str, str], ReleaseRecord] = field(default_factory=dict)
    connections: dict[str, Connection] = field(default_factory=dict)
    _positions: itertools.count = field(default_factory=lambda: itertools.count(1))
    _turn: itertools.count = field(default_factory=itertools.count)

    def register(
        self, credential_scope: Mapping[str, Any], body: Mapping[str, Any]
    ) -> Connection | Refused:
        """Apply one `register` body (§7.1) under the credential's scope.

        The scope is checked before anything is looked up; a reused release ID with conflicting
        contract metadata is refused; the first success records the commit position.
        """
        if _scope(body.get("scope", {})) != _scope(credential_scope):
            return Refused("unauthorized_scope")
        scope = _scope(credential_scope)
        release = body["release"]
        versioned = release["kind"] == "versioned"
        key = release["id"] if versioned else release["group"]
        contract = dict(body["contract"])
        record = self.releases.get((*scope, key))
        if record is not None and record.contract != contract:
            return Refused("conflicting_release")
        if record is None:
            record = ReleaseRecord(
                scope, key, versioned, contract, tuple(body["functions"]), next(self._positions)
            )
            self.releases[(*scope, key)] = record
        connection = Connection(
            body["instance_id"],
            scope,
            record,
            int(body["capacity"]["max_concurrent"]),
            busy=int(body.get("busy", 0)),
        )
        self.connections[connection.instance_id] = connection
        return connection

    def disconnect(self, instance_id: str) -> None:
        """Only the connection record goes; releases, manifests and triggers stay."""
        self.connections.pop(instance_id, None)

    def drain(self, instance_id: str) -> None:
        if instance_id in self.connections:
            self.connections[instance_id].draining = True

    def route(self, credential_scope: Mapping[str, Any], need: Requirement) -> Connection | None:
        """The worker for the next piece of work, or None: the work stays durable and queued."""
        scope = _scope(credential_scope)
        candidates = [
            c
            for c in self.connections.values()
            if c.scope == scope and not c.draining and c.free and _compatible(c.release, need)
        ]
        if not candidates:
            return None
        versioned = [c for c in candidates if c.release.versioned]
        if versioned:
            newest = max(c.release.commit_position for c in versioned)
            pool = [c for c in versioned if c.release.commit_position == newest]
        else:
            pool = candidates  # every candidate unversioned: balance, no recency claims
        pool.sort(key=lambda c: c.instance_id)
        return self.pick(pool)

    def pick(self, pool: list[Connection]) -> Connection:
        """Balance across the newest release's healthy instances (a fleet's routing policy
        overrides it: `server.routing`)."""
        return pool[next(self._turn) % len(pool)]


def _compatible(release: ReleaseRecord, need: Requirement) -> bool:
    contract = release.contract
    return (
        need.function_id in release.functions
        and contract.get("protocol_major") == need.protocol_major
        and contract.get("value_codec") == need.value_codec
        and (not need.capabilities or need.capabilities <= set(contract.get("capabilities", ())))
    )


def phantom_body(host: Mapping[str, Any] | None, worker: Mapping[str, Any]) -> dict[str, Any]:
    """The `register` body of a scenario's second worker (`{"worker": {...}}` script item): the
    host's own body with the instance, release, protocol capabilities and capacity the item
    names, and `busy` invocations already in flight. The model server never sends it work: a
    scenario registers it to show routing passes it over."""
    body = dict(host or {})
    body["instance_id"] = str(worker.get("instance", "phantom"))
    body["release"] = {"kind": "versioned", "id": str(worker.get("release", "rel-phantom"))}
    contract = dict(body.get("contract", {}))
    if "capabilities" in worker:
        contract["capabilities"] = sorted(worker["capabilities"])
        body["capabilities"] = sorted(worker["capabilities"])
    body["contract"] = contract
    body["capacity"] = {"max_concurrent": int(worker.get("capacity", 1))}
    body["busy"] = int(worker.get("busy", 0))
    return body
