"""Children: a child run materialized when its invoke is accepted, its identity derived from
(scope, parent run, step) and its deadline the tightest of its bounds, and its terminal outcome
settled in the parent as an ordinary step result [S99, S100, S101].

Apart because a child is a whole run of its own: its creation and its end are the two places
where two runs' states meet.
"""

from __future__ import annotations

from fakepeer.server.state import COMPLETED, RunState, derived_id, server_error


class Children:
    """Child runs: created at acceptance, their outcome settled in the parent."""

    def _start_child(self, run: RunState, declaration: dict) -> None:
        """A child run materialized at acceptance, identity from (scope, parent run, step),
        bounded by the tightest deadline [S99, S100, S101]."""
        step_id = declaration["step_id"]
        child_id = derived_id("run", self.env.scope, run.run_id, step_id)
        if child_id in self.runs:
            return
        now = self.clock.now_ms
        timeout = declaration.get("timeout_ms")
        bounds = [
            (now + int(timeout) if timeout is not None else None, "invoke"),
            (run.deadline_ms, "parent"),
        ]
        alias = (
            f"child:{step_id}" if run.parent is None else f"{self.aliases[run.run_id]}/{step_id}"
        )
        if declaration["function_id"] not in self.env.functions:
            error = server_error("server.unknown_function", declaration["function_id"])
            run.settle(step_id, {"status": "failed", "error": error})
            self._discover_soon(run)
            return
        self._new_run(
            child_id,
            alias,
            declaration["function_id"],
            declaration["input"],
            parent=(run.run_id, step_id),
            bounds=bounds,
        )

    def _settle_parent(self, child: RunState) -> None:
        """The child's accepted terminal outcome is an ordinary accepted step result [S100]."""
        parent = self.runs[child.parent[0]]  # type: ignore[index]
        step_id = child.parent[1]  # type: ignore[index]
        if parent.terminal or step_id in parent.history:
            return
        if child.status == COMPLETED:
            parent.settle(step_id, {"status": "completed", "value": child.value})
        else:
            parent.settle(step_id, {"status": "failed", "error": child.error})
        self._discover_soon(parent)
