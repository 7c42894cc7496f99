"""Waits and events: a wait registered in the accepting transaction with its timeout, events
accepted once (emitted by a run or submitted by the script), and each event routed to the waits
it matches and the functions its triggers start [S92-S95, S108-S110].

Apart because event routing crosses runs: an emission of one run settles another's wait or
starts a new run, by correlation and registration order, never by the clock.
"""

from __future__ import annotations

from fakepeer.protocol.canonical import canonical_bytes
from fakepeer.protocol.limits import MAX_VALUE_BYTES
from fakepeer.server.events import AcceptedEvent, Wait
from fakepeer.server.state import RunState, derived_id, server_error


class Waits:
    """Event waits and their timeouts, emissions, submitted events, and routing."""

    def _register_wait(self, run: RunState, declaration: dict) -> None:
        """Registered in the accepting transaction; the timeout anchored there [S92, S93]."""
        now = self.clock.now_ms
        wait = Wait(
            run.run_id,
            declaration["step_id"],
            declaration["event"],
            dict(declaration["correlation"]),
            self.events.next_position(),
            now,
            now + int(declaration["timeout_ms"]),
        )
        self.events.register(wait)
        self._note(run, f"wait {wait.step_id} registered for {wait.event}")
        self._schedule_wait_timeout(run, wait)

    def _schedule_wait_timeout(self, run: RunState, wait: Wait) -> None:
        def timeout() -> None:
            if wait.settled or run.terminal:
                return
            wait.settled = True
            self._note(run, f"wait {wait.step_id} timed out")
            error = server_error("sdk.timeout", f"no {wait.event} event before the timeout")
            run.settle(wait.step_id, {"status": "failed", "error": error})
            self._discover_soon(run)

        self._keep(run, self.scheduler.at(wait.timeout_at_ms, timeout, f"wait {wait.step_id}"))

    def _emit(self, run: RunState, declaration: dict) -> None:
        """Accepted once, identity from (scope, run, step), settled with the receipt in the
        same step, then routed to matching waits and triggered functions [S108, S109, S110]."""
        event = self._accept_emission(run, declaration)
        run.settle(
            declaration["step_id"],
            {"status": "completed", "value": {"t": "str", "v": event.event_id}},
        )
        self._discover_soon(run)

    def _accept_emission(self, run: RunState, declaration: dict) -> AcceptedEvent:
        """The transactional acceptance: one event per (scope, run, step) identity, routed once."""
        step_id = declaration["step_id"]
        event_id = derived_id("evt", self.env.scope, run.run_id, step_id)
        event, new = self.events.accept(
            event_id,
            declaration["event"],
            declaration["payload"],
            declaration["metadata"],
            self.clock.now_ms,
            f"{self.aliases[run.run_id]}/{step_id}",
            self.routing_generation(),
        )
        if new:
            self._note(run, f"event {event.name} accepted ({event.event_id})")
            self._route(event)
        return event

    def _submit(self, name: str, payload: dict, metadata: dict[str, str], index: int) -> None:
        event_id = derived_id("evt", self.env.scope, "submitted", index)
        event, new = self.events.accept(
            event_id,
            name,
            payload,
            metadata,
            self.clock.now_ms,
            "submitted",
            self.routing_generation(),
        )
        if new:
            self._server_note(f"event {name} submitted ({event_id})")
            self._route(event)

    def _route(self, event: AcceptedEvent) -> None:
        """Settle every wait the event matches, then start the functions its triggers name."""
        for wait in self.events.matching_waits(event):
            wait.settled = True
            run = self.runs[wait.run_id]
            if run.terminal:
                continue
            if len(canonical_bytes(event.payload)) > MAX_VALUE_BYTES:
                # "A matched payload the durable record cannot carry" [S95]
                error = server_error("sdk.invalid_result", "the matched payload is too large")
                run.settle(wait.step_id, {"status": "failed", "error": error})
                self._note(run, f"wait {wait.step_id} matched {event.name}: unrecordable")
            else:
                run.settle(wait.step_id, {"status": "completed", "value": event.payload})
                self._note(run, f"wait {wait.step_id} matched {event.name}")
            self._discover_soon(run)
        for index, (application_id, trigger) in enumerate(
            self.triggers_at(event.routing_generation)
        ):
            if trigger.event != event.name:
                continue
            if application_id != self.env.scope["application_id"]:
                continue  # another application's worker serves it: not simulated here
            run_id = derived_id("run", event.event_id, trigger.id, index)
            if run_id in self.runs:
                continue
            alias = f"{trigger.function}<-{event.name}"
            self._new_run(run_id, alias, trigger.function, event.payload)
