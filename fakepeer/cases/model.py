"""The in-memory form of a loaded fixture: steps expanded, ids assigned, bytes encoded.

A fixture loaded from a file keeps only its file's bytes, compressed (`Fixture.source`), and
builds its steps when asked (`Fixture.steps`, once per case): a corpus's memory is then about
its size on disk, not the size of every expanded body, parsed string and prepared frame. A
fixture built in memory (the scenario API, the bench's own benchmarks) holds its steps.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from fakepeer.protocol.encode import encode_envelope
from fakepeer.protocol.version import BASE_VERSION

Level = Literal["required", "recommended"]


#: A sent frame longer than this is encoded again when its case runs, not kept from the load:
#: a corpus's few large frames ($repeat, near-limit values) would otherwise stay in memory for
#: the whole run, once per fixture that has one.
KEPT_FRAME_BYTES = 64 * 1024


@dataclass(frozen=True)
class SendStep:
    """Send one envelope; `payload` is its encoded JSON text (`prepared`, when kept)."""

    envelope: dict
    prepared: bytes | None
    exchange_id: str

    @property
    def payload(self) -> bytes:
        if self.prepared is not None:
            return self.prepared
        return encode_envelope(self.envelope)


@dataclass(frozen=True)
class RawSendStep:
    """Send one frame of arbitrary bytes (malformed-frame tests)."""

    payload: bytes
    exchange_id: str


@dataclass(frozen=True)
class ExpectStep:
    """Read the next SDK frame and compare kind and body; it must carry `exchange_id`."""

    kind: str
    body: dict
    exchange_id: str
    vary: tuple[str, ...] = ()
    derive: tuple[tuple[str, str], ...] = ()
    #: `(pointer, step, earlier pointer)`: the value at `pointer` must equal the value at
    #: `earlier pointer` in the answer step `step` (1-based) read, where both are present.
    same_as: tuple[tuple[str, int, str], ...] = ()
    #: The recommended parts: (pointer pattern, decision) pairs. A difference only there is a
    #: warning (docs/fixtures.md "Levels inside a fixture"); the rest of the expectation is
    #: required.
    recommend: tuple[tuple[str, str], ...] = ()
    #: Required matchers (pointer, `json` | `json_ordered`): the base64 JSON text there must
    #: parse to the document the expected one parses to, whatever its spelling.
    match: tuple[tuple[str, str], ...] = ()
    #: The expected effect trace (§12.4) of the invoke this step answers, or None.
    trace: ExpectedTrace | None = None
    #: Built from a fixture file that loaded cleanly, with nothing varied or derived: `kind`
    #: and `body` passed the kind's schema and the §3 value rules as a whole message then, so
    #: an answer equal to them (types included) is valid too (compare.Comparer's fast path).
    checked: bool = field(default=False, repr=False, compare=False)
    #: What the comparer prepared from this step (compare.Comparer), kept as long as the step.
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def expected(self) -> dict:
        """The compared part of the envelope."""
        return {"kind": self.kind, "body": self.body}


@dataclass(frozen=True)
class ExpectedTrace:
    """Trace events to see; `match` "exact" compares whole events, "members" only those named.

    `only`, when not empty, keeps just the recorded events of those `event` kinds first.
    `after_reset`: the bench sends `conform.reset` before it asks for the trace, so the host must
    answer with what it recorded since the reset, nothing (host contract §12.4).
    """

    events: tuple[dict, ...]
    match: Literal["exact", "members"] = "exact"
    only: tuple[str, ...] = ()
    after_reset: bool = False


Step = SendStep | RawSendStep | ExpectStep
#: Builds a fixture's steps from its checked file's bytes (`Fixture.compact`).
StepBuilder = Callable[[bytes, Path | None], tuple[Step, ...]]


@dataclass(frozen=True)
class Rule:
    """What a fixture checks: the RFD 2 sentence that demands it, and the project decision
    (docs/decisions.md) it also depends on, if any."""

    section: str
    quote: str
    protocol: str | None = None
    decision: str | None = None

    @classmethod
    def from_json(cls, record: dict) -> Rule:
        """The `rule` member of a fixture (or of a report's case, which may lack parts)."""
        return cls(
            record.get("section", ""),
            record.get("quote", ""),
            record.get("protocol"),
            record.get("decision"),
        )

    def to_json(self, *, decision: bool = True) -> dict:
        """The `rule` member: section and quote, then protocol and decision when set.

        `decision=False` leaves the decision out (the JSON report's rule has none).
        """
        record = {"section": self.section, "quote": self.quote}
        if self.protocol is not None:
            record["protocol"] = self.protocol
        if decision and self.decision is not None:
            record["decision"] = self.decision
        return record


@dataclass(frozen=True)
class Fixture:
    """One conformance case, ready to run."""

    id: str
    title: str
    rule: Rule
    category: str
    level: Level
    capabilities: tuple[str, ...]
    #: The steps, when held; None when they are built from `source` (see `steps`).
    held_steps: tuple[Step, ...] | None
    path: Path | None = None
    notes: str | None = None
    #: The lowest protocol version the case needs (`protocol_version`, default 1.0).
    protocol_version: str = BASE_VERSION
    #: The derived variant this is (`fakepeer.cases.variants`), None for the fixture as written.
    variant: str | None = None
    #: A lifecycle scenario played by the model server instead of `steps`, its `expand()` the
    #: `fakepeer.cases.lifecycle.LifecycleSpec` to play (a loaded one keeps its compressed
    #: bytes, `CompactLifecycle`); None for an exchange fixture.
    lifecycle: object | None = field(default=None, repr=False, compare=False)
    #: The checked fixture file's bytes, zlib-compressed, when `held_steps` is None.
    source: bytes | None = field(default=None, repr=False, compare=False)
    #: Builds the steps from `source` again (the loader's, handed over by `compact`: the
    #: loader imports this module, so this module never imports the loader).
    builder: StepBuilder | None = field(default=None, repr=False, compare=False)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps: held, or built anew from `source` on each call (take them once per case;
        nothing of them stays with the fixture when the case is done)."""
        if self.held_steps is not None:
            return self.held_steps
        assert self.source is not None and self.builder is not None, (
            "a fixture holds its steps, or its source and how to build them"
        )
        return self.builder(zlib.decompress(self.source), self.path)

    def compact(self, data: bytes, builder: StepBuilder) -> Fixture:
        """This fixture keeping `data` (the checked file's bytes) instead of its built steps,
        and `builder` to build them again when asked (a module-level function: it pickles)."""
        return replace(self, held_steps=None, source=zlib.compress(data, 6), builder=builder)

    @classmethod
    def from_document(
        cls, document: dict, path: Path | None, steps: tuple[Step, ...] = (), **own: object
    ) -> Fixture:
        """A fixture from its checked file: the members every kind of fixture file has, then
        its `steps` and the kind's `own` fields (an exchange fixture's protocol version, a
        lifecycle fixture's scenario)."""
        return cls(
            id=document["id"],
            title=document["title"],
            rule=Rule.from_json(document["rule"]),
            category=document["category"],
            level=document["level"],
            capabilities=tuple(document["capabilities"]),
            held_steps=steps,
            path=path,
            notes=document.get("notes"),
            **own,  # type: ignore[arg-type]
        )

    @property
    def required(self) -> bool:
        return self.level == "required"

    def needs_newer_version(self, negotiated: str | None) -> str | None:
        """Why the case cannot run on a session that negotiated `negotiated`, or None."""
        if negotiated is None or negotiated == self.protocol_version:  # once per case: cheap first
            return None
        from fakepeer.protocol.version import parse_version

        if parse_version(negotiated) >= parse_version(self.protocol_version):
            return None
        return (
            f"the fixture needs protocol {self.protocol_version}; the SDK negotiated {negotiated}"
        )

    def missing_capabilities(self, offered: frozenset[str] | set[str]) -> list[str]:
        """Capabilities this case needs that the SDK did not offer, sorted."""
        return sorted(set(self.capabilities) - set(offered))
