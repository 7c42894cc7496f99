"""Routing policies for a fleet of real hosts: which instance of the newest compatible release
takes the next piece of work.

RFD 2 routing "prefers the newest compatible release, and balances across its healthy
instances"; `ReleaseRegistry.route` keeps scope, contract, capacity, drain and recency, and a
policy only chooses inside the pool it leaves: `alternate` (a different instance from the one
before where possible), `random` (seeded), and `rolling` (alternate within whatever is live: the
fleet registers the next release and drains the old one as the run goes, `server.fleet`).
A refused registration (a release ID reused with another contract) breaks the fleet: it is
raised as a HostFault naming the instance, never left as a worker that silently is not there.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from fakepeer.server.host import HostFault
from fakepeer.server.releases import Connection, Refused, ReleaseRegistry

ROUTING_POLICIES = ("alternate", "random", "rolling")


class FleetRegistry(ReleaseRegistry):
    """The release registry of a fleet: RFD 2 routing, then the policy's choice in the pool."""

    def __init__(self, policy: str = "alternate", seed: int = 0) -> None:
        if policy not in ROUTING_POLICIES:
            raise ValueError(f"unknown routing policy {policy!r} ({', '.join(ROUTING_POLICIES)})")
        super().__init__()
        self.policy = policy
        self._random = random.Random(seed)
        self._last: str | None = None

    def register(
        self, credential_scope: Mapping[str, Any], body: Mapping[str, Any]
    ) -> Connection | Refused:
        result = super().register(credential_scope, body)
        if isinstance(result, Refused):
            release = body.get("release", {})
            raise HostFault(
                f"{body.get('instance_id')}: registration refused ({result.code}): release "
                f"{release.get('id', release.get('group'))!r} is registered with another "
                "contract by another host of the fleet"
            )
        return result

    def pick(self, pool: list[Connection]) -> Connection:
        if self.policy == "random":
            chosen = self._random.choice(pool)
        else:  # alternate, rolling: another instance than the one before, where there is one
            others = [c for c in pool if c.instance_id != self._last] or pool
            later = [c for c in others if self._last is None or c.instance_id > self._last]
            chosen = (later or others)[0]
        self._last = chosen.instance_id
        return chosen
