"""What the SDK did, not only what it answered: the effect trace (docs/host-contract.md §12.4).

After each answer to an `invoke`, the bench asks the host for `conform.trace`: the callbacks and
compensators that started and the errors program code caught. Every trace is held against the
invariants below (no fixture has to ask), and against the fixture's own `trace` when it states one.
Each invariant names the RFD 2 sentence it enforces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fakepeer.cases.model import ExpectedTrace
from fakepeer.compare import Finding
from fakepeer.protocol.pointer import VaryPattern


@dataclass(frozen=True)
class Invariant:
    name: str
    #: The RFD 2 sentence (or part of it) the invariant enforces, word for word.
    quote: str


DISCOVERY_RUNS_NOTHING = Invariant(
    "discovery-runs-no-callback",
    "In discovery, the first unresolved step.run suspends the invocation, declares that step, "
    "and no later callback runs.",
)
REPLAY_RUNS_NOTHING = Invariant(
    "replayed-step-runs-no-callback",
    "Accepted replay entries return their recorded values without executing callbacks",
)
ONLY_THE_TARGET = Invariant(
    "only-the-target-runs",
    "In a targeted execution only the named step’s current callback runs",
)
AT_MOST_ONCE = Invariant(
    "target-runs-at-most-once",
    "One SDK invocation is exactly one discovery pass or one targeted forward or compensation "
    "execution.",
)
IDENTITY_UNCHANGED = Invariant(
    "identity-passed-unchanged",
    "An SDK passes both to callbacks unchanged and never derives identity from wall-clock time, "
    "process state, or source location.",
)
NEEDS_FORWARD_RESULT = Invariant(
    "compensator-needs-forward-result",
    "a compensator is invoked only when the replay history carries its step’s accepted forward "
    "result.",
)
REJECTED_NOT_STARTED = Invariant(
    "rejected-only-before-start",
    "A targeted invocation may instead return rejected_before_start only when the SDK did not "
    "invoke the callback.",
)
SUSPENSION_NOT_CAUGHT = Invariant(
    "catch-never-catches-suspension",
    "The suspension used to stop a pass is an SDK-internal control signal: it must not escape "
    "step.run as an application error",
)
REFUSED_RUNS_NOTHING = Invariant(
    "refused-invoke-runs-nothing",
    "Unknown fields are ignored; unknown required enum variants or capabilities fail explicitly.",
)

TARGET_EXECUTED = Invariant(
    "targeted-answer-ran-the-callback",
    "One SDK invocation is exactly one discovery pass or one targeted forward or compensation "
    "execution.",
)
COMPENSATOR_INVOKED = Invariant(
    "compensation-answer-ran-the-compensator",
    "In compensation mode, the SDK replays accepted history, invokes only the target step’s "
    "current compensator with its recorded forward result",
)

INVARIANTS: tuple[Invariant, ...] = (
    DISCOVERY_RUNS_NOTHING,
    REPLAY_RUNS_NOTHING,
    ONLY_THE_TARGET,
    AT_MOST_ONCE,
    IDENTITY_UNCHANGED,
    NEEDS_FORWARD_RESULT,
    REJECTED_NOT_STARTED,
    SUSPENSION_NOT_CAUGHT,
    REFUSED_RUNS_NOTHING,
    TARGET_EXECUTED,
    COMPENSATOR_INVOKED,
)

_PHASE_OF_MODE = {"forward": "forward", "compensate": "compensation"}
#: The answers that report the target's own outcome: its callback (compensator) ran, once.
EXECUTED_ANSWERS = {
    "forward": frozenset({"step_completed", "step_failed"}),
    "compensate": frozenset({"compensation_completed", "compensation_failed"}),
}


class TraceProblem(Exception):
    """The host's answer to `conform.trace` is unusable (absent support, or a malformed body)."""

    def __init__(self, message: str, missing: str | None = None) -> None:
        super().__init__(message)
        #: The host-contract piece the host lacks (`conform.trace`), None for a malformed answer.
        self.missing = missing


def trace_events(answer: Mapping) -> list[dict]:
    """The events of a host's `conform.trace` answer; TraceProblem when it is not one."""
    kind = answer.get("kind")
    body = answer.get("body")
    if kind == "protocol_error":
        raise TraceProblem(
            "the conformance host does not implement conform.trace (docs/host-contract.md "
            "§12.4): it answered protocol_error, so what the workflow did cannot be checked; "
            "every case with an invoke needs it",
            missing="conform.trace",
        )
    if kind != "conform.trace" or not isinstance(body, dict):
        raise TraceProblem(f"answered conform.trace with {kind!r}, not conform.trace")
    events = body.get("events")
    if not isinstance(events, list) or not all(_well_formed(event) for event in events):
        raise TraceProblem(
            "its conform.trace answer is malformed: body.events must be an array of §12.4 events"
        )
    return events


def _well_formed(event: object) -> bool:
    if not isinstance(event, dict):
        return False
    if event.get("event") == "started":
        attempt = event.get("attempt")
        return (
            isinstance(event.get("step_id"), str)
            and event.get("phase") in ("forward", "compensation")
            and isinstance(event.get("operation_id"), str)
            and isinstance(attempt, int)
            and not isinstance(attempt, bool)
        )
    if event.get("event") == "caught":
        what = event.get("what")
        return (
            event.get("by") in ("catch", "catch_all")
            and what in ("error", "suspension")
            and (what == "suspension" or isinstance(event.get("category"), str))
        )
    return False


def _mode_of(invoke: Mapping) -> str | None:
    """The invoke's `mode` when it is one of §9's three, else None."""
    body = invoke.get("body")
    mode = body.get("mode") if isinstance(body, dict) else None
    return mode if mode in ("discover", "forward", "compensate") else None


@dataclass
class InvokeFacts:
    """What the invariants need from one `invoke` the bench sent."""

    mode: str | None
    history: dict[str, str]  # step id -> status
    target: dict | None

    @classmethod
    def of(cls, envelope: Mapping) -> InvokeFacts:
        body = envelope.get("body")
        body = body if isinstance(body, dict) else {}
        mode = _mode_of(envelope)
        history: dict[str, str] = {}
        entries = body.get("history")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("step_id"), str):
                history.setdefault(entry["step_id"], str(entry.get("status")))
        target = body.get("target") if isinstance(body.get("target"), dict) else None
        return cls(mode, history, target if mode in _PHASE_OF_MODE else None)


def check_invariants(
    invoke: Mapping, answer: Mapping, events: Sequence[dict], findings: list[Finding] | None = None
) -> tuple[list[Finding], int]:
    """Hold one invoke's trace against every invariant that applies; (findings, checks made).

    `findings`: where they go (a `CappedFindings` keeps a bounded number of them and counts the
    rest, as a case does); a fresh list by default."""
    findings = [] if findings is None else findings
    answer_kind = answer.get("kind")
    if not events:  # the common trace: only a missing start can fail, outside discovery
        mode = _mode_of(invoke)
        if answer_kind == "protocol_error" or mode is None:
            return findings, 2
        if mode == "discover":
            return findings, 3
    facts = InvokeFacts.of(invoke)
    starts = [(i, e) for i, e in enumerate(events) if e.get("event") == "started"]
    checks = 0

    def fail(invariant: Invariant, index: int | None, detail: str) -> None:
        findings.append(
            Finding(
                "invariant",
                f"/trace/{index}" if index is not None else "/trace",
                f"{invariant.name}: {detail} (RFD 2: \u201c{invariant.quote}\u201d)",
            )
        )

    checks += 1
    for index, event in enumerate(events):
        if event.get("event") == "caught" and event.get("by") == "catch":
            if event.get("what") == "suspension":
                fail(SUSPENSION_NOT_CAUGHT, index, "a `catch: true` op caught the suspension")
    if answer_kind == "protocol_error" or facts.mode is None:
        checks += 1
        for index, event in starts:
            fail(REFUSED_RUNS_NOTHING, index, f"{_describe(event)} for an invoke it refused")
        return findings, checks
    if facts.mode == "discover":
        checks += 2
        for index, event in starts:
            replayed = event.get("step_id") in facts.history
            invariant = REPLAY_RUNS_NOTHING if replayed else DISCOVERY_RUNS_NOTHING
            fail(invariant, index, f"{_describe(event)} in a discovery pass")
        return findings, checks
    target = facts.target or {}
    phase = _PHASE_OF_MODE[facts.mode]
    step_id = target.get("step_id")
    checks += 7
    targeted = []
    for index, event in starts:
        if event.get("step_id") == step_id and event.get("phase") == phase:
            targeted.append((index, event))
        elif event.get("step_id") in facts.history:
            fail(REPLAY_RUNS_NOTHING, index, f"{_describe(event)} for a replayed step")
        else:
            fail(
                ONLY_THE_TARGET, index, f"{_describe(event)}; the target is {phase} of {step_id!r}"
            )
    for index, _event in targeted[1:]:
        fail(AT_MOST_ONCE, index, f"the target's {_kind(phase)} started again")
    if answer_kind in EXECUTED_ANSWERS[facts.mode] and not targeted:
        invariant = TARGET_EXECUTED if phase == "forward" else COMPENSATOR_INVOKED
        fail(
            invariant,
            None,
            f"answered {answer_kind} but the trace records no start of the target's "
            f"{_kind(phase)} ({phase} of {step_id!r}); the host records `started` inside every "
            "callback and compensator it runs (docs/host-contract.md)",
        )
    for index, event in targeted[:1]:
        for member in ("operation_id", "attempt"):
            if event.get(member) != target.get(member):
                fail(
                    IDENTITY_UNCHANGED,
                    index,
                    f"the {_kind(phase)} got {member} {event.get(member)!r}, the target says "
                    f"{target.get(member)!r}",
                )
        if phase == "compensation" and facts.history.get(step_id) != "completed":
            fail(NEEDS_FORWARD_RESULT, index, f"history has no completed entry for {step_id!r}")
    if answer_kind == "rejected_before_start":
        for index, event in starts:
            fail(REJECTED_NOT_STARTED, index, f"{_describe(event)}, then rejected_before_start")
    return findings, checks


def check_delivered(
    invoke: Mapping, answers: Sequence[Mapping], events: Sequence[dict]
) -> list[str]:
    """The model server's check of an invoke it delivered more than once (a duplicate), or whose
    answer it read and dropped (a lost answer): each answer that reports the target's outcome was
    one execution of the target, so the trace holds at least one start of it and no more starts
    than answers (the one-pass invariants do not apply to two passes)."""
    facts = InvokeFacts.of(invoke)
    if facts.mode not in _PHASE_OF_MODE:
        return []
    phase = _PHASE_OF_MODE[facts.mode]
    step_id = (facts.target or {}).get("step_id")
    starts = sum(
        1
        for event in events
        if event.get("event") == "started"
        and event.get("step_id") == step_id
        and event.get("phase") == phase
    )
    executed = sum(1 for answer in answers if answer.get("kind") in EXECUTED_ANSWERS[facts.mode])
    problems = []
    if executed and not starts:
        invariant = TARGET_EXECUTED if phase == "forward" else COMPENSATOR_INVOKED
        problems.append(
            f"{invariant.name}: {executed} answer(s) report the target's outcome but the trace "
            f"records no start of its {_kind(phase)} (RFD 2: \u201c{invariant.quote}\u201d)"
        )
    if starts > len(answers):
        problems.append(
            f"{AT_MOST_ONCE.name}: the target's {_kind(phase)} started {starts} times for "
            f"{len(answers)} deliveries (RFD 2: \u201c{AT_MOST_ONCE.quote}\u201d)"
        )
    return problems


def check_expected_trace(
    expected: ExpectedTrace, events: Sequence[dict], recommend: Sequence[tuple[str, str]] = ()
) -> list[Finding]:
    """The fixture's own `trace`: same number of events, each equal (or equal on its members).
    An event that differs only in members a `recommend` pointer `/trace/N/member` names is a
    recommended finding (a warning), like any recommended part of the answer."""
    findings: list[Finding] = []
    if expected.only:
        events = [event for event in events if event.get("event") in expected.only]
    if len(events) != len(expected.events):
        findings.append(
            Finding(
                "trace",
                "/trace",
                f"expected {len(expected.events)} trace event(s), the host recorded {len(events)}",
                list(expected.events),
                list(events),
            )
        )
        return findings
    for index, (want, got) in enumerate(zip(expected.events, events, strict=True)):
        seen = got if expected.match == "exact" else {k: got.get(k) for k in want}
        if seen != want:
            finding = Finding("trace", f"/trace/{index}", "trace event differs", want, dict(got))
            rule = _recommended_only(index, want, seen, recommend)
            findings.append(finding if rule is None else finding.as_recommended(rule))
    return findings


def _recommended_only(
    index: int, want: dict, seen: dict, recommend: Sequence[tuple[str, str]]
) -> str | None:
    """The decision of the recommended trace members the event differs in alone, or None."""
    parts = [
        (VaryPattern(pointer), rule) for pointer, rule in recommend if pointer.startswith("/trace/")
    ]
    if not parts:
        return None
    patterns = [pattern for pattern, _ in parts]
    here = ("trace", str(index))
    relevant = [(p, r) for p, r in parts if p.may_match_below(here)]
    if not relevant:
        return None

    def stripped(event: dict) -> dict:
        return {k: v for k, v in event.items() if not any(p.matches((*here, k)) for p in patterns)}

    if stripped(want) != stripped(seen):
        return None
    return relevant[0][1]


def _kind(phase: str) -> str:
    return "callback" if phase == "forward" else "compensator"


def _describe(event: Mapping) -> str:
    return (
        f"the {_kind(str(event.get('phase')))} of step {event.get('step_id')!r} started "
        f"(operation {event.get('operation_id')!r}, attempt {event.get('attempt')!r})"
    )
