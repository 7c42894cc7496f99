"""One pass of a function: what each step call does in each mode (protocol §11.2-§11.4).

Every step call claims its ID first (the duplicate check, §11.2 item 3), then converts its
arguments (a refusal raises at the call), then is replayed, declared, or run as the target
(D-CONVERT-BEFORE-REPLAY); a compensation target's step.run converts only its compensator.
Once the pass has its answer every later step call raises the stop signal again (item 4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fakepeer.oracle import trace
from fakepeer.oracle.history import HistoryIndex
from fakepeer.oracle.model import AppError, Stop
from fakepeer.oracle.values import sdk_value

#: A callback gets the step context (run_id, step_id, operation_id, attempt) and returns a
#: tagged value or raises AppError; a compensator also gets the recorded forward value.
Callback = Callable[[dict], dict]
Compensator = Callable[[dict, dict], dict]
MESSAGE = "/body/error/message"


@dataclass
class Answer:
    """The answer the pass settled on."""

    kind: str
    body: dict
    open: tuple[str, ...] = ()
    why: str = ""


class Pass:
    """The state of one discovery, forward or compensation pass."""

    def __init__(self, body: dict, history: HistoryIndex) -> None:
        self.run_id: str = body["run_id"]
        self.mode: str = body["mode"]
        self.target: dict | None = body.get("target") if self.mode != "discover" else None
        self.history = history
        self.claimed: set[str] = set()
        self.answer: Answer | None = None
        self.events: list[dict] = []

    # ------------------------------------------------------------------ answers

    def fix(self, kind: str, body: dict, open_: tuple[str, ...] = (), why: str = "") -> None:
        """Settle the answer (the first one wins) and unwind with the stop signal."""
        if self.answer is None:
            self.answer = Answer(kind, body, open_, why)
        raise Stop

    def not_found(self, why: str) -> None:
        """`target_not_found` (§10.6): the identity members copied from the target."""
        assert self.target is not None
        body = {key: self.target[key] for key in ("run_id", "step_id", "phase")}
        self.fix("target_not_found", body, why=why)

    def _identity(self) -> dict:
        assert self.target is not None
        return {key: self.target[key] for key in ("operation_id", "attempt", "fencing_generation")}

    def returned(self, value: dict) -> None:
        """The function returned: `completed` in discovery, `target_not_found` otherwise."""
        if self.answer is not None:
            return
        try:
            value = sdk_value(value)
        except AppError as error:
            self.failed(error, "the return value cannot be converted")
            return
        if self.mode == "discover":
            self.answer = Answer("completed", {"value": value}, why="the function returned")
        else:
            self.answer = Answer(
                "target_not_found",
                self._not_found_body(),
                why="the function returned before reaching the target",
            )

    def failed(self, error: AppError, why: str) -> None:
        """A failure escaped the function: `failed` in discovery, `target_not_found` otherwise."""
        if self.answer is not None:
            return
        if self.mode == "discover":
            open_ = (MESSAGE,) if error.sdk_made else ()
            self.answer = Answer("failed", {"error": error.record}, open_, why)
        else:
            self.answer = Answer(
                "target_not_found", self._not_found_body(), why=f"{why}, before reaching the target"
            )

    def _not_found_body(self) -> dict:
        assert self.target is not None
        return {key: self.target[key] for key in ("run_id", "step_id", "phase")}

    # ------------------------------------------------------------------ step calls

    def step(
        self,
        step_id: str,
        kind: str,
        declare: Callable[[], dict],
        callback: Callback | None = None,
        compensator: Compensator | None = None,
        open_: tuple[str, ...] = (),
    ) -> dict:
        """One step call; returns the step's value or raises AppError / Stop. `open_`: pointers
        of the declaration a correct SDK may spell its own way (not compared)."""
        if self.answer is not None:
            raise Stop
        if step_id in self.claimed:
            self.fix(
                "definition_blocked",
                {"reason": "duplicate_step_id", "step_id": step_id},
                ("/body/first_source", "/body/duplicate_source"),
                f"step id {step_id!r} met twice in one pass",
            )
        self.claimed.add(step_id)
        is_target = self.target is not None and step_id == self.target["step_id"]
        # compensation declares nothing: the target step's forward metadata (name, retry) is not
        # converted, only its compensator is used (D-CONVERT-BEFORE-REPLAY)
        skip = is_target and self.mode == "compensate" and kind == "step"
        declaration = {} if skip else declare()  # may raise AppError: a refusal at the call
        entry = self.history.get(step_id)
        if is_target:
            if kind != "step":
                self._unsupported(step_id, kind)
            if self.mode == "forward":
                self._run_forward(step_id, callback)
            self._run_compensation(step_id, entry, compensator)
        if entry is not None:
            if entry.completed:
                assert entry.value is not None
                return entry.value
            assert entry.error is not None
            raise AppError(entry.error)
        if self.mode == "discover":
            self.fix(
                "declared",
                {"declaration": declaration},
                open_,
                f"{step_id!r} is the first unresolved step",
            )
        self.not_found(f"the unresolved step {step_id!r} comes before the target")
        raise AssertionError("unreachable")

    def _unsupported(self, step_id: str, kind: str) -> None:
        assert self.target is not None
        body = {
            "request_id": "",  # filled in by the caller, which knows the envelope id
            "attempt": self.target["attempt"],
            "fencing_generation": self.target["fencing_generation"],
            "reason": {"code": "unsupported_target", "message": "", "retryable": False},
        }
        self.fix(
            "rejected_before_start",
            body,
            ("/body/reason/message",),
            f"the target {step_id!r} is a {kind}, not a step.run",
        )

    def _context(self, step_id: str) -> dict:
        assert self.target is not None
        return {
            "run_id": self.run_id,
            "step_id": step_id,
            "operation_id": self.target["operation_id"],
            "attempt": self.target["attempt"],
        }

    def _run_forward(self, step_id: str, callback: Callback | None) -> None:
        assert callback is not None and self.target is not None
        context = self._context(step_id)
        self.events.append(
            trace.started(step_id, "forward", context["operation_id"], context["attempt"])
        )
        try:
            value = sdk_value(callback(context))
        except AppError as error:
            open_ = (MESSAGE,) if error.sdk_made else ()
            self.fix(
                "step_failed",
                {**self._identity(), "error": error.record},
                open_,
                f"the target {step_id!r} ran and failed",
            )
        self.fix(
            "step_completed",
            {**self._identity(), "value": value},
            why=f"the target {step_id!r} ran",
        )

    def _run_compensation(
        self, step_id: str, entry: object, compensator: Compensator | None
    ) -> None:
        if entry is None or not entry.completed:  # type: ignore[attr-defined]
            self.not_found(f"the target {step_id!r} has no completed history entry")
        if compensator is None:
            self.not_found(f"the current code gives {step_id!r} no compensator")
        assert compensator is not None
        context = self._context(step_id)
        self.events.append(
            trace.started(step_id, "compensation", context["operation_id"], context["attempt"])
        )
        try:
            value = sdk_value(compensator(context, entry.value))  # type: ignore[attr-defined]
        except AppError as error:
            open_ = (MESSAGE,) if error.sdk_made else ()
            self.fix(
                "compensation_failed",
                {**self._identity(), "error": error.record},
                open_,
                f"the compensator of {step_id!r} ran and failed",
            )
        self.fix(
            "compensation_completed",
            {**self._identity(), "value": value},
            why=f"the compensator of {step_id!r} ran",
        )
