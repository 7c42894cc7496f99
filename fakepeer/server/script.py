"""What a scenario injects: script items at virtual times, and faults matched to invocations.

Script items (at a virtual offset from the start): an event submitted to the workspace, ambient
state changed, the code changed (an ambient change that is a deployment: blocked runs are
discovered again), admission closed or opened, the host restarted, another run started, the
*server* restarted (everything volatile lost, everything durable kept), another worker
registered (one that is never fit to serve: if routing chose it, the work would go unanswered).
Faults apply to the invocations they match: the answer lost, the request delivered twice, the
host killed while the invocation runs, the host restarted just before it; and two that act after
the answer was applied: `redeliver` delivers the same request again (the history it was sent
with, the same target) `after` ms later, `rediscover` invokes a discovery of the run again
`after` ms later (an ambiguous transport failure: "Discovery may be invoked again"). For these
two, `step` in a discovery's `when` names the step the discovery declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCRIPT_KINDS = (
    "event",
    "ambient",
    "code",
    "admission",
    "restart",
    "start",
    "server_restart",
    "worker",
)
FAULT_KINDS = (
    "lost_answer",
    "duplicate",
    "crash",
    "restart",
    "redeliver",
    "rediscover",
    # HTTP only (docs/protocol.md §1.1): a generic status, timeout or reset instead of the answer
    "http_502",
    "http_503",
    "http_timeout",
    "http_reset",
)
#: Faults that act after the invocation's answer was applied.
AFTER_FAULTS = ("redeliver", "rediscover")


@dataclass(frozen=True)
class ScriptItem:
    at_ms: int
    kind: str
    event: str = ""
    payload: dict | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    key: str = ""
    value: str = ""
    open: bool = True
    function: str = ""
    input: dict | None = None
    worker: dict | None = None

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> ScriptItem:
        at = int(item.get("at", 0))
        if "event" in item:
            event = item["event"]
            return cls(
                at,
                "event",
                event=event["name"],
                payload=event["payload"],
                metadata=dict(event.get("metadata", {})),
            )
        for kind in ("ambient", "code"):
            if kind in item:
                return cls(at, kind, key=item[kind]["key"], value=item[kind]["value"])
        if "admission" in item:
            return cls(at, "admission", open=bool(item["admission"]))
        if "start" in item:
            start = item["start"]
            return cls(at, "start", function=start["function"], input=start["input"])
        if item.get("restart"):
            return cls(at, "restart")
        if item.get("server_restart"):
            return cls(at, "server_restart")
        if "worker" in item:
            return cls(at, "worker", worker=dict(item["worker"]))
        raise ValueError(f"unknown script item {item!r}")


@dataclass
class Fault:
    """A fault applied to up to `times` invocations matching `when` (None: every match)."""

    kind: str
    mode: str | None = None
    step: str | None = None
    attempt: int | None = None
    function: str | None = None
    times: int | None = 1
    used: int = 0
    after_ms: int = 0

    @property
    def acts_after(self) -> bool:
        """Whether the fault acts after the answer was applied (redeliver, rediscover)."""
        return self.kind in AFTER_FAULTS

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> Fault:
        when = item.get("when", {})
        if item["fault"] not in FAULT_KINDS:
            raise ValueError(f"unknown fault {item['fault']!r}")
        return cls(
            item["fault"],
            when.get("mode"),
            when.get("step"),
            when.get("attempt"),
            when.get("function"),
            item.get("times", 1),
            after_ms=int(item.get("after", 0)),
        )

    def matches(self, mode: str, step: str | None, attempt: int | None, function: str) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        return (
            (self.mode is None or self.mode == mode)
            and (self.step is None or self.step == step)
            and (self.attempt is None or self.attempt == attempt)
            and (self.function is None or self.function == function)
        )


def parse_fault_option(text: str) -> Fault:
    """`KIND[:MODE[:STEP[:ATTEMPT]]][+AFTER][*TIMES]` (TIMES `all` for every match; AFTER the
    virtual ms a redeliver or rediscover waits), for `simulate`."""
    times: int | None = 1
    after_ms = 0
    if "*" in text:
        text, count = text.rsplit("*", 1)
        if count == "all":
            times = None
        elif count.isdigit() and int(count) >= 1:
            times = int(count)
        else:
            raise ValueError(
                f"the count after '*' must be a positive integer or 'all', not {count!r}"
            )
    if "+" in text:
        text, delay = text.rsplit("+", 1)
        if not delay.isdigit():
            raise ValueError(f"the delay after '+' must be whole milliseconds, not {delay!r}")
        after_ms = int(delay)
    parts = text.split(":")
    if parts[0] not in FAULT_KINDS:
        raise ValueError(f"unknown fault {parts[0]!r}; known: {', '.join(FAULT_KINDS)}")
    if len(parts) > 4:
        raise ValueError("a fault is KIND[:MODE[:STEP[:ATTEMPT]]][+AFTER][*TIMES]")
    mode = parts[1] if len(parts) > 1 and parts[1] else None
    if mode is not None and mode not in ("discover", "forward", "compensate"):
        raise ValueError(f"unknown mode {mode!r}; known: discover, forward, compensate")
    step = parts[2] if len(parts) > 2 and parts[2] else None
    attempt = None
    if len(parts) > 3 and parts[3]:
        if not parts[3].isdigit() or int(parts[3]) < 1:
            raise ValueError(f"the attempt must be a positive integer, not {parts[3]!r}")
        attempt = int(parts[3])
    if after_ms and parts[0] not in AFTER_FAULTS:
        raise ValueError(f"'+AFTER' applies to {' and '.join(AFTER_FAULTS)} only")
    return Fault(parts[0], mode, step, attempt, None, times, after_ms=after_ms)
