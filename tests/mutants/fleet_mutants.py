"""Fleet mutants: faults that pass the whole corpus on one SDK and break a fleet (issue 37).

Each is the Python reference SDK with one fault, patched in memory like a mutant of
`patches.py`, served by `mutant_host.py fleet.NAME`. The fault class is real: an SDK that keeps
a host-local journal of what it did for a run (on disk, so it survives its own restarts; cleared
by `conform.reset`, as a case's state is) and trusts it over the server's history. On one SDK
the journal always agrees with the history, since every answer that wrote it came from this
SDK; in a fleet the history also holds the other SDK's answers, which the journal does not, so
the host replays history written by another host differently from its own ("every release must
interpret durable history using stable function and step identifiers").

`FLEET_KILLS` names the fleet cases that kill each mutant (`tests/mutants/test_fleet_mutants.py`
checks them; KILL_MATRIX.md's fleet section lists them).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from patches import _m, replace_everywhere

PREFIX = "fleet."


@dataclass(frozen=True)
class FleetMutant:
    name: str
    fault: str
    apply: Callable[[], None]


FLEET_MUTANTS: dict[str, FleetMutant] = {}

#: The fleet cases (Python with Node, `run --variants fleet,rolling`) that kill each mutant: a
#: subset of what kills it, each checked by the test.
FLEET_KILLS = {
    "fleet.journal-over-history": (
        "lifecycle.saga-charge-answers-lost-compensates-reserve@fleet",
        "lifecycle.timer-anchored-at-acceptance@fleet",
    ),
    "fleet.compensates-own-steps-only": (
        "lifecycle.compensation-skips-step-without-compensator@fleet",
        "lifecycle.uncaught-failure-unwinds-in-reverse-completion-order@fleet",
    ),
    "fleet.own-failures-only": (
        "lifecycle.caught-step-failure-continues@fleet",
        "lifecycle.non-retryable-failure-not-retried@fleet",
    ),
}


def fleet_mutant(name: str, fault: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def register(apply: Callable[[], None]) -> Callable[[], None]:
        FLEET_MUTANTS[PREFIX + name] = FleetMutant(PREFIX + name, fault, apply)
        return apply

    return register


def apply_fleet_mutant(name: str) -> None:
    FLEET_MUTANTS[name].apply()


# ------------------------------------------------------------------------- the host's journal


def _journal_path() -> Path:
    """One journal per bench process (the host's parent), so its restarts share it."""
    return Path(tempfile.gettempdir()) / f"ryusen-fleet-mutant-{os.getuid()}-{os.getppid()}.json"


def _load() -> dict[str, Any]:
    try:
        return json.loads(_journal_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _save(journal: dict[str, Any]) -> None:
    path = _journal_path()
    path.with_suffix(".tmp").write_text(json.dumps(journal), encoding="utf-8")
    path.with_suffix(".tmp").replace(path)


def _journaled(rewrite: Callable[[dict[str, Any], Any], Any]) -> None:
    """Wrap `execute` so every answer is journaled per run, and `rewrite(run's journal,
    request)` may change the request (or return an Answer) once the host has a journal for
    the run; `conform.reset` forgets the journal."""
    invocation = _m("ryusen_sdk.invocation")
    answers = _m("ryusen_sdk.answers")
    original = invocation.execute

    def execute(registry: Any, request: Any, admission_open: bool = True) -> Any:
        journal = _load()
        mine = journal.get(request.run_id)
        if mine is not None:
            changed = rewrite(mine, request)
            if isinstance(changed, answers.Answer):
                return changed
            request = changed
        answer = original(registry, request, admission_open)
        mine = journal.setdefault(request.run_id, {"declared": [], "executed": [], "failed": []})
        if answer.kind == "declared" and answer.body["declaration"].get("type") == "step":
            mine["declared"].append(answer.body["declaration"]["step_id"])
        elif answer.kind == "step_completed" and request.target is not None:
            mine["executed"].append(request.target.step_id)
        elif answer.kind == "step_failed" and request.target is not None:
            mine["failed"].append(request.target.step_id)
        _save(journal)
        return answer

    replace_everywhere(original, execute)
    host = _m("conform_host.host")
    control = host.Host.control

    def forgetting(self: Any, envelope: Any, body: dict[str, Any]) -> None:
        if envelope.kind == "conform.reset":
            _journal_path().unlink(missing_ok=True)
        control(self, envelope, body)

    host.Host.control = forgetting


def _dropping(settled: Callable[[dict[str, Any], str, Any], bool]) -> None:
    """Journal the answers, and replay without each history entry `settled(journal, step,
    entry)` says this host does not take as settled."""

    def rewrite(mine: dict[str, Any], request: Any) -> Any:
        history = {
            step: entry for step, entry in request.history.items() if settled(mine, step, entry)
        }
        return replace(request, history=history)

    _journaled(rewrite)


@fleet_mutant(
    "journal-over-history",
    "a host that executed a step of a run before treats a step it declared but did not "
    "execute itself as not done, although the history settles it",
)
def _journal_over_history() -> None:
    _dropping(
        lambda mine, step, entry: (
            not (
                mine["executed"]  # before it served this run's work, the history rules
                and entry.status == "completed"
                and step in mine["declared"]
                and step not in mine["executed"]
            )
        )
    )


@fleet_mutant(
    "compensates-own-steps-only",
    "a host answers a compensation target for a step it declared, saw completed by another "
    "host's answer and never executed itself with target_not_found (the compensation is skipped)",
)
def _compensates_own_steps_only() -> None:
    answers = _m("ryusen_sdk.answers")

    def rewrite(mine: dict[str, Any], request: Any) -> Any:
        target = request.target
        foreign = mine.setdefault("foreign", [])
        skip = (
            request.mode == "compensate"
            and target is not None
            and target.step_id in foreign
            and target.step_id not in mine["executed"]
        )
        foreign.extend(  # completed in the history, declared here, executed elsewhere
            step
            for step, entry in request.history.items()
            if entry.status == "completed"
            and step in mine["declared"]
            and step not in mine["executed"]
            and step not in foreign
        )
        return answers.target_not_found(target) if skip else request

    _journaled(rewrite)


@fleet_mutant(
    "own-failures-only",
    "a host that answered for a run before replays a step's application failure only if it "
    "answered that failure itself; another host's recorded failure is taken as not settled",
)
def _own_failures_only() -> None:
    _dropping(
        lambda mine, step, entry: (
            not (
                entry.status == "failed"
                and step in mine["declared"]
                and step not in mine["failed"]
                and not str((entry.error or {}).get("category", "")).startswith("server.")
            )
        )
    )
