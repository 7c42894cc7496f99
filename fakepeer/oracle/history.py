"""The history of one `invoke` as the SDK sees it: entries by step ID (§9.1, §9.2)."""

from __future__ import annotations

from dataclasses import dataclass

from fakepeer.oracle.model import Unmodeled
from fakepeer.oracle.values import wire_record


@dataclass(frozen=True)
class Entry:
    """One accepted result (`value`) or terminal failure (`error`) of a step."""

    step_id: str
    completed: bool
    value: dict | None = None
    error: dict | None = None


class HistoryIndex:
    """Entries by step ID; a repeated step ID is a malformed invoke, which the oracle leaves
    to the envelope fixtures (it decides only well-formed invocations)."""

    def __init__(self, history: list) -> None:
        self._entries: dict[str, Entry] = {}
        for entry in history:
            step_id = entry.get("step_id")
            if step_id in self._entries:
                raise Unmodeled("a history with a repeated step_id is a malformed invoke")
            if entry.get("status") == "completed":
                self._entries[step_id] = Entry(step_id, True, value=entry["value"])
            else:
                self._entries[step_id] = Entry(step_id, False, error=wire_record(entry["error"]))

    def get(self, step_id: str) -> Entry | None:
        """The entry for `step_id`, or None when the step is unresolved."""
        return self._entries.get(step_id)
