"""The model server's run loop, in the order of a transaction.

`simulate` publishes the host's registry, schedules the scenario's script, creates the root run
and plays the virtual clock's work until nothing is due or a bound stops it. A run is created
(`_new_run`: its deadline armed, its first discovery queued), discovered, and each declaration a
discovery persists becomes durable work (an attempt, a timer, a wait, a child, an event), every
invoke sent through one dispatch, until the run ends (`_finish`: its pending work cancelled, its
waits and children ended, its parent told). Each concern is a module of its own, a mixin of
`ModelServer` whose state lives on the one instance (`ModelServer.__init__` lists it all):

    publication.py  the registry the host publishes; workers; routing work to one of them
    discovery.py    discovery passes and the declarations they persist; a blocked run
    attempts.py     targeted forward and compensation attempts, retries, the unwind
    timing.py       the run deadline and durable timers
    waits.py        event waits, emissions, submitted events and their routing
    children.py     child runs and their outcome settled in the parent
    dispatch.py     one invoke sent to a worker and its answer read
    faults.py       the scenario's script, injected faults, redelivery, a server restart

Rule ids in brackets (`[S12]`) name the RFD 2 sentence each behaviour implements: see
`rules.RULES`. Decisions RFD 2 leaves open are in docs/server.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fakepeer.protocol.manifest import ManifestStore
from fakepeer.protocol.messages import CONFORM_SCOPE
from fakepeer.server.attempts import Attempts
from fakepeer.server.children import Children
from fakepeer.server.clock import Scheduler, VirtualClock
from fakepeer.server.discovery import Discovery
from fakepeer.server.dispatch import Dispatch
from fakepeer.server.events import EventLog
from fakepeer.server.faults import Faults
from fakepeer.server.host import BoundReached, HostFault, HostLink
from fakepeer.server.policy import (
    DEFAULT_MAX_INVOCATIONS,  # noqa: F401 - re-exported
    ServerPolicy,
)
from fakepeer.server.publication import Publication
from fakepeer.server.releases import ReleaseRegistry
from fakepeer.server.report import RunReport
from fakepeer.server.script import Fault, ScriptItem
from fakepeer.server.state import CANCELLED, ERROR, RunState, server_error
from fakepeer.server.timeline import Entry, Timeline
from fakepeer.server.timing import Timing
from fakepeer.server.waits import Waits

ROOT_RUN_ID = "run-1"


@dataclass
class _Env:
    scope: dict = field(default_factory=lambda: dict(CONFORM_SCOPE))
    functions: dict[str, int | None] = field(default_factory=dict)  # id -> timeout_ms


class ModelServer(Publication, Discovery, Attempts, Timing, Waits, Children, Dispatch, Faults):
    """Plays Ryusen's run loop against one host. One instance runs one simulation."""

    def __init__(
        self,
        link: HostLink,
        *,
        max_invocations: int = DEFAULT_MAX_INVOCATIONS,
        keep_frames: bool = False,
        policy_timeout_ms: int | None = None,
        trace: bool = False,
        policy: ServerPolicy | None = None,
        root_run_id: str = ROOT_RUN_ID,
    ) -> None:
        self.link = link
        #: The id of the run `simulate` starts: a lifecycle scenario names its own
        #: (`run-<fixture id>`), so state a host keeps per run never crosses scenarios.
        self.root_run_id = root_run_id
        #: Ask the host for its effect trace after every answered invocation (§12.4).
        self.trace = trace
        self.policy = policy or ServerPolicy(default_timeout_ms=policy_timeout_ms)
        self.policy_timeout_ms = self.policy.default_timeout_ms
        self.releases = ReleaseRegistry()
        link.on_start = self._register_worker
        self.clock = VirtualClock()
        self.scheduler = Scheduler(self.clock)
        self.events = EventLog()
        self.store = ManifestStore(self.policy.max_timeout_ms)
        self.env = _Env()
        self.runs: dict[str, RunState] = {}
        self.aliases: dict[str, str] = {}
        self.timeline = Timeline(keep_frames=keep_frames)
        self.faults: list[Fault] = []
        self.max_invocations = max_invocations
        self.invocations = 0
        self.fencing = 0
        self._discovering: set[str] = set()
        self._pending: dict[str, list] = {}
        self._stopped: str | None = None
        #: `time.monotonic()` past which the run stops (`simulate --max-time`), and why.
        self.stop_at: float | None = None
        self.stop_reason = "stopped: the time bound was reached"
        self._host_fault: str | None = None
        self._queued: list[Any] = []
        #: Instance ids of the workers the scenario registered besides the host (never fit).
        self.phantoms: set[str] = set()
        self._host_instance: str | None = None

    # ================================================================= a transaction

    def simulate(
        self,
        function_id: str,
        input_value: dict,
        script: Iterable[ScriptItem] = (),
        faults: Iterable[Fault] = (),
    ) -> RunReport:
        """Publish the host's registry, start one run, play it (and what it causes) to the end."""
        self.faults = list(faults)
        try:
            self._publish()
            if self.store.active_generation(self.env.scope) is None:
                return self._rejected_publication(function_id, input_value)
            for index, item in enumerate(script):  # at 0: before the run's first discovery
                self.scheduler.at(
                    self.clock.start_ms + item.at_ms,
                    lambda item=item, index=index: self._script(item, index),
                    f"script {item.kind}",
                )
            self._new_run(self.root_run_id, "main", function_id, input_value)
            while self._stopped is None and self.scheduler.run_next():
                if self.invocations >= self.max_invocations:
                    self._stopped = f"stopped after {self.invocations} invocations"
                elif self.stop_at is not None and time.monotonic() >= self.stop_at:
                    self._stopped = self.stop_reason
        except BoundReached as exc:
            if self.stop_at is None:  # no bound of the caller's: the host took too long
                self._fault(str(exc), function_id, input_value)
            else:  # the caller's bound cut an exchange short: stopped, as between exchanges
                self._stopped = self.stop_reason
                self._root(function_id, input_value)
        except HostFault as exc:
            self._fault(str(exc), function_id, input_value)
        return self._report()

    def _new_run(
        self,
        run_id: str,
        alias: str,
        function_id: str,
        input_value: dict,
        *,
        parent: tuple[str, str] | None = None,
        bounds: Iterable[tuple[int | None, str]] = (),
    ) -> RunState:
        """A run created now; its deadline is the tightest of its bounds [S48, S101]."""
        now = self.clock.now_ms
        run = RunState(run_id, function_id, input_value, now, parent=parent)
        timeout = self.env.functions.get(function_id)
        candidates = [(now + timeout, "function")] if timeout is not None else []
        if timeout is None and self.policy_timeout_ms is not None:  # an inherited default [S46]
            candidates = [(now + self.policy_timeout_ms, "policy")]
        candidates += [(instant, source) for instant, source in bounds if instant is not None]
        if candidates:
            run.deadline_ms, run.deadline_source = min(candidates, key=lambda pair: pair[0])
            self._keep(run, self.scheduler.at(run.deadline_ms, lambda: self._deadline(run)))
        self.runs[run_id] = run
        self.aliases[run_id] = alias
        self._note(run, f"run created: {function_id}")
        self._discover_soon(run)
        return run

    def _keep(self, run: RunState, entry: Any) -> None:
        self._pending.setdefault(run.run_id, []).append(entry)

    def _finish(self, run: RunState, status: str) -> None:
        """A run reaches a terminal status: its pending work is cancelled, its parent told."""
        run.status = status
        for entry in self._pending.pop(run.run_id, []):
            self.scheduler.cancel(entry)
        self._discovering.discard(run.run_id)
        for wait in self.events.waits:
            if wait.run_id == run.run_id:
                wait.settled = True
        for child in self.runs.values():
            if child.parent is not None and child.parent[0] == run.run_id and not child.terminal:
                child.error = server_error("sdk.cancelled", "the parent run ended")
                self._note(child, "cancelled with its parent")
                self._finish(child, CANCELLED)
        self._note(run, f"run {status}")
        if run.parent is not None and status != CANCELLED:
            self._settle_parent(run)

    # ================================================================= its record

    def _fault(self, reason: str, function_id: str, input_value: dict) -> None:
        """The host broke the run: every run not yet ended is in error, the root notes why."""
        self._host_fault = reason
        root = self._root(function_id, input_value)
        for run in self.runs.values():
            if not run.terminal:
                run.status = ERROR
        self._note(root, f"host fault: {reason}")

    def _root(self, function_id: str, input_value: dict) -> RunState:
        """The root run, made when the run ended before it was created (a fault in publishing)."""
        root = self.runs.get(self.root_run_id)
        if root is None:
            root = RunState(self.root_run_id, function_id, input_value, self.clock.now_ms)
            self.runs[self.root_run_id] = root
            self.aliases[self.root_run_id] = "main"
        return root

    def _report(self) -> RunReport:
        return RunReport(
            root=self.runs[self.root_run_id],
            runs=self.runs,
            aliases=self.aliases,
            timeline=self.timeline,
            events=self.events.events,
            elapsed_ms=self.clock.elapsed_ms,
            invocations=self.invocations,
            stopped=self._stopped,
            host_fault=self._host_fault,
        )

    def _server_note(self, text: str) -> None:
        self.timeline.add(Entry(self.clock.elapsed_ms, "server", "note", text=text))

    def _note(self, run: RunState, text: str) -> None:
        self.timeline.add(
            Entry(
                self.clock.elapsed_ms, self.aliases.get(run.run_id, run.run_id), "note", text=text
            )
        )
