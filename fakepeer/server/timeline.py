"""The timeline of a simulation: every invocation with its answer, and the server's own steps.

An invocation renders as one comparable line, `@<ms> <run> <mode>[ <step> #<attempt>] -> <answer>`,
which is what lifecycle scenarios list in `expect.invocations`; notes (timer fired, event
accepted, retry scheduled, compensation begins, ...) render as `@<ms> <run> : <text>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Entry:
    at_ms: int  # virtual milliseconds since the simulation began
    run: str  # the run's alias: main, child:<step>, <function><-<event>
    kind: str  # "invoke" or "note"
    mode: str = ""
    step: str | None = None
    attempt: int | None = None
    operation_id: str | None = None
    fencing_generation: str | None = None
    answer: str = ""
    detail: str = ""
    fault: str | None = None
    text: str = ""
    frames: dict[str, Any] = field(default_factory=dict)
    #: The host's effect trace for this invocation (§12.4), when the server asked for it.
    trace: list[dict] | None = None
    #: The §12.4 invariants this invocation's trace broke (checked when the trace was asked for).
    violations: list[str] = field(default_factory=list)
    #: The fleet host that answered (`server.fleet`); None for a single host.
    host: str | None = None

    def started(self) -> list[str]:
        """`<step> <phase> #<attempt>` of every callback the trace says started."""
        return [
            f"{event['step_id']} {event['phase']} #{event['attempt']}"
            for event in self.trace or ()
            if event.get("event") == "started"
        ]

    def line(self) -> str:
        if self.kind == "note":
            return f"@{self.at_ms} {self.run} : {self.text}"
        target = f" {self.step} #{self.attempt}" if self.step is not None else ""
        answer = self.answer + (f" {self.detail}" if self.detail else "")
        if self.fault:
            answer += f" ({self.fault})"
        return f"@{self.at_ms} {self.run} {self.mode}{target} -> {answer}"

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"at_ms": self.at_ms, "run": self.run, "kind": self.kind}
        if self.kind == "note":
            record["text"] = self.text
            return record
        record["mode"] = self.mode
        if self.step is not None:
            record.update(
                step=self.step,
                attempt=self.attempt,
                operation_id=self.operation_id,
                fencing_generation=self.fencing_generation,
            )
        record["answer"] = self.answer
        if self.host is not None:
            record["host"] = self.host
        if self.detail:
            record["detail"] = self.detail
        if self.fault:
            record["fault"] = self.fault
        record["line"] = self.line()
        if self.trace is not None:
            record["trace"] = self.trace
        if self.violations:
            record["violations"] = self.violations
        if self.frames:
            record["frames"] = self.frames
        return record


@dataclass
class Timeline:
    entries: list[Entry] = field(default_factory=list)
    keep_frames: bool = False

    def add(self, entry: Entry) -> Entry:
        self.entries.append(entry)
        return entry

    def invocations(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.kind == "invoke"]

    def invocation_lines(self) -> list[str]:
        return [entry.line() for entry in self.invocations()]
