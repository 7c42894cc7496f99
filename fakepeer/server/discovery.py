"""Discovery: a pass over a run's accepted history, and the declaration it answers with
persisted together with its durable work [S70, S72, S79].

Apart because what a declaration becomes (an attempt, a timer, a wait, a child, an event) and
when it is refused (repeated, disagreeing, over the replay budget, stale) is the server's one
gate on new work; a blocked run (definition_blocked) also waits and resumes here [S73].
"""

from __future__ import annotations

from fakepeer.server.host import HostFault
from fakepeer.server.state import (
    BLOCKED,
    COMPENSATING,
    COMPLETED,
    RUNNING,
    Operation,
    RunState,
    server_error,
)
from fakepeer.server.timeline import Entry


def _declared_step(answer: dict) -> str | None:
    """The step a discovery's `declared` answer names (None for other answers)."""
    if answer.get("kind") != "declared":
        return None
    return answer["body"]["declaration"].get("step_id")


class Discovery:
    """Discovery passes, blocked runs, and the declarations a pass persists."""

    def _discover_soon(self, run: RunState) -> None:
        if run.run_id in self._discovering or run.terminal:
            return
        self._discovering.add(run.run_id)
        self._keep(run, self.scheduler.soon(lambda: self._discover(run), "discover"))

    def _discover(self, run: RunState) -> None:
        """One discovery pass over the accepted history [S70, S72]."""
        self._discovering.discard(run.run_id)
        if not self._live(run) or run.status in (BLOCKED, COMPENSATING):
            return
        worker = self._worker_for(run, lambda: self._discover_soon(run))
        if worker is None:
            return
        body = {
            "run_id": run.run_id,
            "function_id": run.function_id,
            "mode": "discover",
            "input": run.input,
            "history": run.history_list(),
        }
        entry, answer = self._dispatch(run, "discover", body, worker=worker)
        if answer is None:  # lost: discovery is repeatable, so it is simply invoked again [S07]
            self._discover_soon(run)
            return
        kind, answer_body = answer["kind"], answer["body"]
        self._after_faults(run, "discover", None, body, entry, _declared_step(answer))
        if kind == "declared":
            self._declared(run, answer_body["declaration"], entry)
        elif kind == "completed":
            run.value = answer_body["value"]
            self._finish(run, COMPLETED)
        elif kind == "failed":
            entry.detail = answer_body["error"]["category"]
            self._uncaught(run, answer_body["error"])
        else:
            self._blocked(run, answer_body, entry)

    def _blocked(
        self, run: RunState, body: dict, entry: Entry, operation: Operation | None = None
    ) -> None:
        """definition_blocked: the run waits for a code change [S73], remembering the targeted
        operation it blocked on, if any, so the change resumes it there (D-BLOCKED-UNWIND)."""
        entry.detail = body.get("step_id", "")
        run.blocker = {"reason": body.get("reason"), "step_id": body.get("step_id")}
        run.blocked_on = (operation.step_id, operation.phase) if operation is not None else None
        run.status = BLOCKED
        self._note(run, "blocked until the code changes")

    def _resume(self, run: RunState) -> None:
        """A code change: a run blocked on a compensation target goes on unwinding, offered the
        same target at the same attempt (definition_blocked ran nothing, so no physical attempt
        happened); any other blocked run is discovered again (D-BLOCKED-UNWIND) [S73, S114]."""
        blocked_on, run.blocked_on, run.blocker = run.blocked_on, None, None
        if blocked_on is not None and blocked_on[1] == "compensation":
            run.status = COMPENSATING
            self._note(run, f"code changed: compensation of {blocked_on[0]} offered again")
            self._forward_soon(run, run.operation(*blocked_on))
            return
        run.status = RUNNING
        self._discover_soon(run)

    def _declared(
        self, run: RunState, declaration: dict, entry: Entry, sent: list[dict] | None = None
    ) -> None:
        """Persist the declaration and create its durable work in one step [S79].

        `sent` is the history the discovery was sent with when it is not the current one (a
        redelivered request): a declaration of a step settled since is a stale answer.
        """
        step_id, kind = declaration["step_id"], declaration["type"]
        entry.detail = f"{kind} {step_id}"
        recorded = run.declarations.get(step_id)
        if step_id in run.history:
            if sent is not None and all(item["step_id"] != step_id for item in sent):
                self._note(run, f"stale declaration of {step_id}: settled since; ignored")
                if kind == "emit":  # the idempotency claim is what keeps it one event [S109]
                    self._accept_emission(run, declaration)
                return
            # "Completed matching steps return their recorded values without executing their
            # callbacks": a pass that declares a settled step ignored the history it was sent
            raise HostFault(
                f"declared {kind} {step_id!r} although the history it was sent settles it"
            )
        if recorded is not None:
            self._repeated(run, recorded, declaration)
            return
        if not self._within_budget(run):
            self._over_budget(run, declaration)
            return
        run.declarations[step_id] = declaration
        run.accepted_ms[step_id] = self.clock.now_ms
        if kind == "step":
            operation = run.operations.get((step_id, "forward"))
            if operation is not None and operation.obsolete:
                # a new declaration after obsolescence: a new operation (D-ATTEMPT-IDENTITY)
                del run.operations[(step_id, "forward")]
                run.incarnations[step_id] = run.incarnations.get(step_id, 1) + 1
            self._forward_soon(run, run.operation(step_id, "forward"))
        elif kind == "timer":
            self._arm_timer(run, declaration)
        elif kind == "wait":
            self._register_wait(run, declaration)
        elif kind == "invoke":
            self._start_child(run, declaration)
        elif kind == "emit":
            self._emit(run, declaration)

    def _repeated(self, run: RunState, recorded: dict, declaration: dict) -> None:
        """A step declared again while its work is pending (a rediscovery, a redelivered or
        duplicate request, a restart's recovery): the recorded declaration stands. "The
        declaration is a step, so it is declared once: a repeated declaration keeps the
        recorded anchor" [S83], a wait "keeps the registration and the anchor" [S93], a child
        or event keeps its identity [S99, S108]; one that disagrees is refused rather than
        adopted (D-REPEATED-DECLARATION): nothing changes and the run goes on."""
        step_id = declaration["step_id"]
        if recorded != declaration:
            self._note(run, f"declaration of {step_id} disagrees with the recorded one: refused")
            return
        if recorded["type"] == "step":
            operation = run.operation(step_id, "forward")
            if operation.due_ms is None and not operation.obsolete:  # nothing scheduled
                self._forward_soon(run, operation)

    def _within_budget(self, run: RunState) -> bool:
        """Whether one more history entry (this declaration's outcome) fits the replay budget."""
        return len(run.history) < self.policy.history_limit

    def _over_budget(self, run: RunState, declaration: dict) -> None:
        """The history already holds as many entries as one invocation may carry, so this
        declaration's outcome could never be replayed: it is refused before it commits
        (nothing armed, registered, created or accepted) and the run fails as if its
        function had, unwinding its completed steps (D-REPLAY-BUDGET) [S95]."""
        step_id = declaration["step_id"]
        limit = self.policy.history_limit
        self._note(run, f"declaration of {step_id} refused: history at the replay budget ({limit})")
        error = server_error(
            "server.replay_budget",
            f"{declaration['type']} {step_id} would be history entry {len(run.history) + 1}; "
            f"the replay budget is {limit}",
        )
        self._uncaught(run, error)
