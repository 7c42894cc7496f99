"""One run served by several real hosts at once: a fleet of SDKs behind the model server.

RFD 2: "Rolling deployments may serve compatible releases concurrently, and every release must
interpret durable history using stable function and step identifiers"; "either SDK publishing an
unchanged application produces the same bytes and does not create a new generation". Each host
registers as its own worker (its own connection, an instance id of its own, the release the
command line gives it or its own), every host publishes the application (the bytes and the
generation must be the same), and every invocation is routed by the server's RFD 2 routing with a
routing policy (`server.routing`). The server records which host answered each invocation and
which hosts' answers wrote the history it replayed, so a divergence names both.

Faults stay per host: a crash, a lost answer or a restart fault hits the host the invocation was
routed to; a `restart` script item restarts every host (the deployment); ambient state and
admission are the deployment's, so every host gets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakepeer.compare import describe
from fakepeer.protocol.manifest import ManifestStore
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.server.discovery import _declared_step
from fakepeer.server.host import HostFault, HostLink
from fakepeer.server.loop import ModelServer
from fakepeer.server.releases import Connection
from fakepeer.server.routing import FleetRegistry
from fakepeer.server.script import ScriptItem
from fakepeer.server.state import RunState
from fakepeer.server.timeline import Entry


@dataclass
class Member:
    """One host of the fleet: its link, its name in reports, the release it registers."""

    label: str
    link: HostLink
    index: int
    release: str | None = None
    joined: bool = True
    drained: bool = False

    @property
    def instance_id(self) -> str:
        own = (self.link.register_body or {}).get("instance_id", "host")
        return f"{own}@{self.index + 1}"

    def body(self) -> dict:
        """The host's `register` body as the server sees this worker (its own instance id)."""
        body = dict(self.link.register_body or {})
        body["instance_id"] = self.instance_id
        if self.release is not None:
            body["release"] = {"kind": "versioned", "id": self.release}
        return body

    @property
    def live(self) -> bool:
        return self.joined and not self.drained


class FleetLink:
    """Several HostLinks behind the one-link interface the model server drives: exchanges go to
    the host the last routing decision chose; the deployment's environment goes to all."""

    def __init__(self, members: Sequence[Member]) -> None:
        if not members:
            raise ValueError("a fleet needs at least one host")
        self.members = list(members)
        self.current = self.members[0]
        self._on_start = None
        #: Each host's case deadline when the fleet last evened them out (`_even_deadlines`).
        self._synced = {id(member): member.link.case_deadline for member in self.members}
        for member in self.members:
            member.link.on_start = lambda _body, member=member: self._started(member)

    # --------------------------------------------------------------- membership

    def member(self, instance_id: str) -> Member | None:
        return next((m for m in self.members if m.instance_id == instance_id), None)

    def live(self) -> list[Member]:
        return [member for member in self.members if member.live]

    def serving(self) -> Member:
        """The host whose body stands for the fleet's (the last routed, or the first live)."""
        if self.current.live:
            return self.current
        return next(iter(self.live()), self.current)

    def roll(self) -> tuple[Member, Member] | None:
        """The next host joins and the oldest live one drains (a rolling deployment step)."""
        waiting = [member for member in self.members if not member.joined]
        live = self.live()
        if not waiting or not live:
            return None
        new, old = waiting[0], live[0]
        new.joined, old.drained = True, True
        return old, new

    # --------------------------------------------------------------- the HostLink interface

    @property
    def on_start(self):  # noqa: ANN201 - the model server's registration callback
        return self._on_start

    @on_start.setter
    def on_start(self, callback) -> None:  # noqa: ANN001
        self._on_start = callback

    def _even_deadlines(self, restarted: Member) -> None:
        """A restart does not eat into the case's time (`HostLink._start` moves that host's
        deadline on): every host of the fleet gets the same extension, as one case's."""
        before = self._synced[id(restarted)]
        after = restarted.link.case_deadline
        if before is not None and after is not None and after > before:
            for member in self.members:
                link = member.link
                if member is not restarted and link.case_deadline is not None:
                    moved = link.case_deadline + after - before
                    link.case_deadline = moved if link.limit is None else min(moved, link.limit)
        self._synced = {id(member): member.link.case_deadline for member in self.members}

    def _started(self, member: Member) -> None:
        """A (re)started host registers again, unless it has not joined yet or is draining."""
        self._even_deadlines(member)
        if self._on_start is not None and member.live:
            self._on_start(member.body())

    @property
    def register_body(self) -> dict | None:
        member = self.serving()
        return member.body() if member.link.register_body is not None else None

    @property
    def last_request_id(self) -> str:
        return self.current.link.last_request_id

    @property
    def dropped_answer(self) -> dict | None:
        return self.current.link.dropped_answer

    @property
    def generic_status(self) -> str | None:
        return self.current.link.generic_status

    def invoke(self, body: dict, fault: str | None = None) -> tuple[dict | None, dict | None]:
        return self.current.link.invoke(body, fault)

    def trace(self) -> list[dict]:
        return self.current.link.trace()

    def restart(self) -> None:
        """A `restart` fault: the host the invocation was routed to restarts."""
        self.current.link.restart()

    def restart_all(self) -> None:
        for member in self.members:
            member.link.restart()

    def set_ambient(self, key: str, value: str) -> None:
        for member in self.members:
            member.link.set_ambient(key, value)

    def set_admission(self, open_: bool) -> None:
        for member in self.members:
            member.link.set_admission(open_)

    def publish(self, store: ManifestStore) -> dict:
        """Every host publishes the application; each must publish the first one's bytes and
        leave its generation active (RFD 2: no new generation for an unchanged application)."""
        first: tuple[Member, dict, str | None] | None = None
        for member in self.members:
            body = member.link.publish(store)
            generation = store.active_generation(CONFORM_SCOPE)
            if first is None:
                first = (member, body, generation)
                continue
            other, expected, active = first
            if body != expected:
                member_name = next(
                    (
                        key
                        for key in sorted(set(body) | set(expected))
                        if body.get(key) != expected.get(key)
                    ),
                    "?",
                )
                raise HostFault(
                    f"fleet publication: {member.label} published other bytes than "
                    f"{other.label} for the same application (/{member_name}: "
                    f"{describe(expected.get(member_name), body.get(member_name))})"
                )
            if generation != active:
                raise HostFault(
                    f"fleet publication: {member.label}'s publication changed the active "
                    f"generation {active} to {generation}"
                )
        assert first is not None
        return first[1]


@dataclass
class Served:
    """Who answered one invocation, and whose answers wrote the history it was sent."""

    entry: Entry
    label: str
    writers: tuple[tuple[str, str], ...]  # (step, label), in history order

    def describe(self) -> str:
        mode = f"{self.entry.run} {self.entry.mode} {self.entry.step or ''}".strip()
        text = f"{mode} answered by {self.label}"
        if self.writers:
            text += "; it replayed history written by " + ", ".join(
                f"{label} ({step})" for step, label in self.writers
            )
        return text


@dataclass
class Roll:
    """When a rolling deployment moves on: after `invocations`, or at `at_ms` virtual ms."""

    invocations: int | None = None
    at_ms: int | None = None


class FleetServer(ModelServer):
    """The model server with a fleet of hosts as its workers (`FleetLink`)."""

    def __init__(
        self,
        fleet: FleetLink,
        *,
        routing: str = "alternate",
        seed: int = 0,
        rolls: Sequence[Roll] = (),
        **options: object,
    ) -> None:
        super().__init__(fleet, **options)  # type: ignore[arg-type]
        self.fleet = fleet
        self.routing = routing
        self.releases = FleetRegistry(routing, seed)
        self._rolls = list(rolls)
        if routing == "rolling":
            for member in fleet.members[1:]:
                member.joined = False
            if not self._rolls:
                self._rolls = [Roll(invocations=2 * (k + 1)) for k in range(len(fleet.members) - 1)]
        self.served: list[Served] = []
        self._writers: dict[tuple[str, str], str] = {}
        self._fault_named = False

    def _fault(self, reason: str, function_id: str, input_value: dict) -> None:
        """A fault found in an answer once it was read (a declaration the history settles,
        ...) names the invocation whose answer it was, its host and its history's writers."""
        if not self._fault_named and self.served:
            last = self.served[-1]
            reason = f"invocation {self.invocations} ({last.describe()}): {reason}"
        super()._fault(reason, function_id, input_value)

    def served_by(self, entry: Entry) -> Served | None:
        return next((served for served in self.served if served.entry is entry), None)

    # --------------------------------------------------------------- registration

    def _publish(self) -> None:
        for member in self.fleet.live():  # in order: with distinct releases, the last is newest
            if member.link.register_body is not None:
                self._register_worker(member.body())
        super()._publish()

    def _server_restart(self) -> None:
        super()._server_restart()  # reconnects the serving host
        serving = self.fleet.serving()
        for member in self.fleet.live():
            if member is not serving and member.link.register_body is not None:
                self._register_worker(member.body())

    def _script(self, item: ScriptItem, index: int) -> None:
        if item.kind == "restart":  # the deployment restarts: every host
            self.fleet.restart_all()
            self._server_note("every host restarted")
            return
        super()._script(item, index)

    def _worker_for(self, run: RunState, action: object) -> Connection | None:
        self._roll()
        return super()._worker_for(run, action)

    def _roll(self) -> None:
        """Rolling: the next release registers and the oldest live host drains; work in
        flight is never moved, later work goes where routing sends it."""
        while self._rolls:
            roll = self._rolls[0]
            due = (roll.invocations is not None and self.invocations >= roll.invocations) or (
                roll.at_ms is not None and self.clock.elapsed_ms >= roll.at_ms
            )
            if not due:
                return
            self._rolls.pop(0)
            moved = self.fleet.roll()
            if moved is None:
                return
            old, new = moved
            body = new.body()
            self._register_worker(body)
            self.releases.drain(old.instance_id)
            self._server_note(
                f"rolling: {new.label} ({body['release'].get('id')}) registered, "
                f"{old.label} draining"
            )

    # --------------------------------------------------------------- dispatch

    def _dispatch(
        self,
        run: RunState,
        mode: str,
        body: dict,
        target: dict | None = None,
        worker: Connection | None = None,
    ) -> tuple[Entry, dict | None]:
        member = self.fleet.member(worker.instance_id) if worker is not None else None
        if member is not None:
            self.fleet.current = member
        label = member.label if member is not None else self.fleet.current.label
        if worker is not None and member is None:
            label = worker.instance_id
        writers = tuple(
            (item["step_id"], self._writers[(run.run_id, item["step_id"])])
            for item in body.get("history", ())
            if (run.run_id, item["step_id"]) in self._writers
        )
        try:
            entry, answer = super()._dispatch(run, mode, body, target, worker)
        except HostFault as exc:
            self._fault_named = True
            where = f"{self.aliases.get(run.run_id, run.run_id)} {mode}"
            if target is not None:
                where += f" {target['step_id']}"
            raise type(exc)(f"{label} ({where}, invocation {self.invocations}): {exc}") from None
        entry.host = label
        self.served.append(Served(entry, label, writers))
        if answer is not None:
            step = target["step_id"] if target is not None else _declared_step(answer)
            if step is not None:
                self._writers[(run.run_id, step)] = label
        return entry, answer


def short_label(label: str) -> str:
    """`runners/python/conform` -> `python`, `python3 host.py NAME` -> `NAME`: how a fleet
    names its hosts in timelines and reports."""
    words = [word for word in label.split() if not word.startswith(("-", "("))] or [label]
    parts = [part for part in words[-1].replace("\\", "/").split("/") if part] or [label]
    if len(parts) >= 2 and parts[-1] == "conform" and parts[-2] not in (".", ".."):
        return parts[-2]
    return parts[-1]


def fleet_members(
    links: Sequence[HostLink], labels: Sequence[str], routing: str, releases: Sequence[str] = ()
) -> list[Member]:
    """The fleet's hosts; under `rolling` each later host registers a release of its own
    (its reported id, `~2`, `~3`, ...) unless `releases` names them."""
    names = [short_label(label) for label in labels]
    if len(set(names)) != len(names):  # the same SDK twice: tell the hosts apart
        names = [f"{name}#{index + 1}" for index, name in enumerate(names)]
    members = []
    for index, (link, name) in enumerate(zip(links, names, strict=True)):
        release = releases[index] if releases else None
        if release is None and routing == "rolling" and index > 0:
            own = (link.register_body or {}).get("release", {})
            release = f"{own.get('id', own.get('group', 'release'))}~{index + 1}"
        members.append(Member(name, link, index, release))
    return members


def fleet_server(
    links: Sequence[HostLink], labels: Sequence[str], fleet: dict, **options: object
) -> FleetServer:
    """A FleetServer over `links` with the routing `simulate.fleet_options` read."""
    routing = fleet["routing"]
    members = fleet_members(links, labels, routing, fleet.get("releases", ()))
    rolls = [Roll(**roll) for roll in fleet.get("rolls", ())]
    return FleetServer(
        FleetLink(members), routing=routing, seed=fleet.get("seed", 0), rolls=rolls, **options
    )
