"""A fuzz campaign: seeded documents drive `conform.echo` in one SDK session, two properties.

Round trip: every portable value comes back with byte-equal canonical encoding (§3.5, §4.1).
Refusal: every malformed value is refused with protocol_error, the right category and pointer
(§3.4). Each property echoes its curated examples and `examples` documents of the seeded
generator (`generator.py`: hypothesis draws cost milliseconds each), then shrinks a failure to a
minimal document (hypothesis, else an exact reduction) and turns it into a fixture. An explicit
seed (and hypothesis's `database=None`) make a run reproducible.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, example, given, settings
from hypothesis import seed as seed_decorator
from hypothesis import strategies as st

from fakepeer.fuzz.checks import problem
from fakepeer.fuzz.echo import EchoReply, EchoSession
from fakepeer.fuzz.fixture import fixture_document, write_fixture
from fakepeer.fuzz.generator import generate
from fakepeer.fuzz.reduce import reduce_malformed, reduce_portable
from fakepeer.fuzz.strategies import (
    FuzzCase,
    curated_malformed,
    curated_portable,
    malformed_cases,
    portable_cases,
)
from fakepeer.session.sdk import SessionError
from fakepeer.session.targets import SdkTarget
from fakepeer.transport.errors import TransportError

PROPERTIES: dict[str, Callable[[], st.SearchStrategy[FuzzCase]]] = {
    "round-trip": portable_cases,
    "refusal": malformed_cases,
}
#: Run first, as hypothesis explicit examples: every curated edge value and defect once.
CURATED: dict[str, Callable[[], list[FuzzCase]]] = {
    "round-trip": curated_portable,
    "refusal": curated_malformed,
}


class FuzzSetupError(Exception):
    """The SDK could not be started and registered, so nothing was fuzzed."""


@dataclass
class Failure:
    """The shrunk counterexample of one property and the fixture made from it."""

    prop: str
    case: FuzzCase
    problem: str
    fixture: dict
    path: Path | None = None
    #: Why it could not be written under --out (it is printed all the same).
    write_error: str = ""


@dataclass
class CampaignResult:
    """Counts and failures of one campaign against one SDK."""

    sdk: str
    seed: int
    examples: int
    sent: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Documents echoed per second (shrinking included)."""
        return self.sent / self.seconds if self.seconds > 0 else 0.0


class _Counterexample(AssertionError):
    pass


def run_campaign(
    target: SdkTarget,
    examples: int = 100,
    seed: int | None = None,
    out: Path | None = None,
    timeout: float = 5.0,
    properties: tuple[str, ...] = tuple(PROPERTIES),
) -> CampaignResult:
    """Fuzz one SDK; failures carry a fixture document (written under `out` when given)."""
    chosen_seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
    result = CampaignResult(sdk=target.label, seed=chosen_seed, examples=examples)
    session = EchoSession(target, timeout)
    started = time.monotonic()
    try:
        try:
            session.start()
        except (SessionError, TransportError) as exc:
            reason = getattr(exc, "reason", str(exc))
            tail = session.session.stderr_tail()
            raise FuzzSetupError(f"cannot start {target.label}: {reason} {tail[-400:]}") from None
        for name in properties:
            failure = _run_property(name, session, examples, chosen_seed)
            if failure is not None:
                if out is not None:
                    try:
                        failure.path = write_fixture(failure.fixture, out)
                    except OSError as exc:  # a full disk: the fixture is still printed
                        failure.write_error = f"cannot write it under {out}: {exc}"
                result.failures.append(failure)
    finally:
        result.sent = session.sent
        result.seconds = time.monotonic() - started
        session.close()
    return result


def _run_property(name: str, session: EchoSession, examples: int, seed: int) -> Failure | None:
    """Run one property: seeded bulk documents pipelined, hypothesis only for a failure.

    The bulk (every curated example, then `examples` documents of `generator.py`, all from
    `seed`) is echoed many per round trip. When one disagrees, the hypothesis property runs with
    the same seed for a minimal counterexample (`_hypothesis_failure`); should it find none, the
    first disagreeing bulk document is shrunk exactly instead (`reduce_portable`,
    `reduce_malformed`). Either way the same seed reports the same counterexample.
    """
    bulk = CURATED[name]() + generate(seed, name, examples)
    replies = session.echo_many([case.doc for case in bulk])
    pairs = zip(bulk, replies, strict=True)
    first = next((i for i, pair in enumerate(pairs) if _fails(*pair)), None)
    if first is None:
        return None
    failure = _hypothesis_failure(name, session, examples, seed)
    if failure is not None:
        return failure
    case = bulk[first]
    reply = replies[first]
    if reply is None:  # lost to a break: ask again, live
        reply = session.echo(case.doc)
    found = problem(case, reply) or "the SDK broke: no answer to the bulk pass"
    if case.portable:
        doc, reduced = reduce_portable(case.doc, lambda d: problem(FuzzCase(d), session.echo(d)))
        if reduced is not None:
            case, found = FuzzCase(doc), reduced
    else:
        case, found = reduce_malformed(case, found, lambda c: problem(c, session.echo(c.doc)))
    return Failure(name, case, found, fixture_document(case, found, session.target.label))


def _hypothesis_failure(
    name: str, session: EchoSession, examples: int, seed: int
) -> Failure | None:
    """Hypothesis's counterexample of property `name`, or None when its examples all pass.

    Hypothesis runs a property one example at a time, so each echo would wait for its answer.
    So the property first runs with a body that only collects the examples (nothing is sent),
    which are echoed many per round trip. Only when one of those answers fails (or was lost to
    a break) does it run again with the same seed, so with the same examples: their answers
    come from the cache, and what is new (the shrinking) is echoed one at a time, live. The
    counterexample and its shrinking are exactly those of a one-at-a-time run.
    """
    collected: list[FuzzCase] = []

    def collect(case: FuzzCase) -> None:
        collected.append(case)

    _hypothesis(name, examples, seed, collect)
    replies = session.echo_many([case.doc for case in collected])
    pairs = list(zip(collected, replies, strict=True))
    if all(reply is not None and problem(case, reply) is None for case, reply in pairs):
        return None
    answers = {_key(case): reply for case, reply in pairs if reply is not None}
    last: list[tuple[FuzzCase, str]] = []

    def echo(case: FuzzCase) -> EchoReply:
        known = answers.get(_key(case))
        return known if known is not None else session.echo(case.doc)

    def prop(case: FuzzCase) -> None:
        found = problem(case, echo(case))
        if found is not None:
            last.append((case, found))
            raise _Counterexample(found)

    try:
        _hypothesis(name, examples, seed, prop)
    except _Counterexample:
        pass
    if not last:
        return None
    case, found = last[-1]  # hypothesis replays the minimal example last
    if case.portable:
        doc, reduced = reduce_portable(case.doc, lambda d: problem(FuzzCase(d), session.echo(d)))
        if reduced is not None:
            case, found = FuzzCase(doc), reduced
    return Failure(name, case, found, fixture_document(case, found, session.target.label))


def _fails(case: FuzzCase, reply: EchoReply | None) -> bool:
    return reply is None or problem(case, reply) is not None


def _hypothesis(name: str, examples: int, seed: int, body: Callable[[FuzzCase], None]) -> None:
    """Run property `name` over `body` (curated examples first), reproducibly from `seed`."""
    check = given(PROPERTIES[name]())(body)
    for curated in reversed(CURATED[name]()):  # hypothesis runs the last-applied first
        check = example(curated)(check)
    check = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )(check)
    seed_decorator(seed)(check)()


def _key(case: FuzzCase) -> str:
    """A case's document as text: equal documents drawn again are answered from the cache."""
    return json.dumps(case.doc, ensure_ascii=True)
