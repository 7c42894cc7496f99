"""What the model server knows of its workers: the registry the host publishes, the workers
that register (the host, its restarts, the scenario's phantoms), and which of them takes a run's
next work.

Apart from the run loop because publication happens once, before any run, and routing is asked
the same question by every kind of work: which live, compatible worker takes it now [S35, S58].
"""

from __future__ import annotations

from typing import Any

from fakepeer.server.releases import Connection, Requirement
from fakepeer.server.report import RunReport
from fakepeer.server.state import ERROR, RunState, server_error


class Publication:
    """Publishing the host's registry, registering workers, routing work to one of them."""

    def _rejected_publication(self, function_id: str, input_value: dict) -> RunReport:
        """Activation rejected the manifest (a run timeout above the policy maximum [S47]):
        nothing is active, so no run can be created; the report's root records why."""
        root = self._root(function_id, input_value)
        root.error = server_error(
            "server.manifest_rejected", "activation rejected the manifest: timeout_above_maximum"
        )
        root.status = ERROR
        self._note(root, "manifest rejected: a run timeout above the policy maximum")
        return self._report()

    def _publish(self) -> None:
        """Learn the registry (function timeouts) from the host's own publication [S35]."""
        if self.link.register_body is not None:
            self._register_worker(self.link.register_body)
        manifest = self.link.publish(self.store)
        for function in manifest.get("functions", []):
            timeout = function.get("timeout_ms")
            self.env.functions[function["id"]] = int(timeout) if timeout is not None else None

    def _register_worker(self, body: dict) -> None:
        """A (re)connected worker: its release keeps its commit position [S52, S53]; work
        queued for lack of a worker is offered again."""
        if body.get("instance_id") not in self.phantoms:
            self._host_instance = body.get("instance_id")
        self.releases.register(self.env.scope, body)
        queued, self._queued = self._queued, []
        for action in queued:
            self.scheduler.soon(action, "queued work")

    def _worker_for(self, run: RunState, action: Any) -> Connection | None:
        """The compatible live worker with a free slot that takes the run's next work; if none,
        the work stays durable and queued until one registers [S58, S60]. The run's durable
        history requires the capabilities its declarations used."""
        need = Requirement(run.function_id, capabilities=frozenset(run.required_capabilities()))
        connection = self.releases.route(self.env.scope, need)
        if connection is not None:
            return connection
        self._note(run, "no compatible live worker: work queued")
        self._queued.append(action)
        return None

    def routing_generation(self) -> str | None:
        head = self.store.workspace_head(self.env.scope["workspace_id"])
        return head.generation_id if head is not None else None

    def triggers_at(self, generation_id: str | None) -> list[tuple[str, Any]]:
        """(application, trigger binding) of the frozen routing generation [S43, S31]."""
        workspace_id = self.env.scope["workspace_id"]
        routing = next(
            (
                generation
                for generation in self.store.workspace_generations(workspace_id)
                if generation.generation_id == generation_id
            ),
            None,
        )
        if routing is None:
            return []
        found = []
        for application_id, app_generation in routing.applications.items():
            scope = {"workspace_id": workspace_id, "application_id": application_id}
            for generation in self.store.application_generations(scope):
                if generation.generation_id == app_generation:
                    found.extend((application_id, trigger) for trigger in generation.triggers)
        return found
