"""The deployment policy a simulation runs under: run-timeout default and maximum, replay budget.

RFD 2: a function's run timeout's "absence means no deadline unless a visible deployment policy
supplies an inherited default"; "Manifest activation rejects, rather than clamps, a duration
above a configured policy maximum"; and "a registration whose own timeout outcome the run's
replay budget cannot carry is refused before it commits". The replay budget is the number of
history entries one invocation may carry: at most the §4.3 bound (1,024), which an SDK refuses
past, and lower when a scenario sets it so a run near the limit costs a few invocations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fakepeer.protocol.limits import MAX_HISTORY_ENTRIES

#: A simulation stops after this many invocations (a run that can never finish, e.g. admission
#: closed for good, would otherwise loop forever on the virtual clock). Here, not in loop.py,
#: so `simulate`'s option default costs no import of the model server.
DEFAULT_MAX_INVOCATIONS = 100_000

#: The members a scenario's `policy` (and `simulate`'s options) may set.
POLICY_MEMBERS = ("default_timeout_ms", "max_timeout_ms", "history_limit")


@dataclass(frozen=True)
class ServerPolicy:
    default_timeout_ms: int | None = None
    max_timeout_ms: int | None = None
    history_limit: int = MAX_HISTORY_ENTRIES

    def __post_init__(self) -> None:
        for name in ("default_timeout_ms", "max_timeout_ms"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
        limit = self.history_limit
        if not isinstance(limit, int) or not 0 <= limit <= MAX_HISTORY_ENTRIES:
            raise ValueError(
                f"history_limit must be an integer from 0 to {MAX_HISTORY_ENTRIES} "
                f"(the §4.3 replay bound), not {limit!r}"
            )

    @classmethod
    def from_json(cls, document: dict[str, Any] | None) -> ServerPolicy:
        """A scenario's `policy` member (absent: no default, no maximum, the §4.3 budget)."""
        document = document or {}
        unknown = sorted(set(document) - set(POLICY_MEMBERS))
        if unknown:
            raise ValueError(f"unknown policy member {unknown[0]!r}")
        return cls(
            document.get("default_timeout_ms"),
            document.get("max_timeout_ms"),
            document.get("history_limit", MAX_HISTORY_ENTRIES),
        )
