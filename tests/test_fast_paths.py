"""The fast paths (fakepeer/protocol/fastpath.py) change nothing but speed: the whole corpus,
run against a correct and a broken SDK with the fast paths on and off, gives the same result for
every case, and every frame of every fixture validates and decodes the same both ways."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from fakepeer.cases import load_fixtures
from fakepeer.cases.model import ExpectStep, RawSendStep, SendStep
from fakepeer.fuzz.strategies import curated_malformed, curated_portable
from fakepeer.protocol import fastpath
from fakepeer.protocol.decode import ProtocolViolation, decode_frame
from fakepeer.protocol.schema import validate_message
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import command_target, default_target
from fakepeer.suite import RunOptions, run_suite

ROOT = Path(__file__).resolve().parents[1]
MUTANT = ROOT / "tests" / "mutants" / "mutant_host.py"


@pytest.fixture(scope="module")
def corpus() -> list:
    return load_fixtures()


def _results(run) -> dict[str, tuple]:
    return {
        case.id: (
            case.raw_outcome,
            case.reason,
            [finding.to_json() for finding in case.findings],
        )
        for case in run.sdks[0].results
    }


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(default_target, id="reference"),
        pytest.param(
            lambda: command_target(f"{sys.executable} {MUTANT} json-not-canonical"),
            id="mutant",
        ),
    ],
)
def test_the_whole_corpus_gives_the_same_results_both_ways(corpus, target) -> None:
    fast = run_suite([target()], corpus, RunOptions(lifecycle_player=play_lifecycle))
    with fastpath.disabled():
        assert not fastpath.enabled()
        plain = run_suite([target()], corpus, RunOptions(lifecycle_player=play_lifecycle))
    assert fastpath.enabled()
    assert len(fast.sdks[0].results) == len(corpus)
    assert _results(fast) == _results(plain)


def _frames(corpus) -> list[tuple[str, dict]]:
    """Every envelope of the corpus (sends, and expects as the SDK should answer), a copy of each
    with its body's first member replaced by a wrong type, and an answer carrying each edge
    value and each listed value defect of the fuzz campaign, so invalid frames count."""
    frames = []
    for case in [*curated_portable(), *curated_malformed()]:
        answer = {"version": "1.0", "kind": "completed", "id": "x#1", "body": {"value": case.doc}}
        frames.append((f"completed with {case.defect or 'a portable value'}", answer))
    for fixture in corpus:
        for number, step in enumerate(fixture.steps, 1):
            if isinstance(step, SendStep):
                envelope = step.envelope
            elif isinstance(step, ExpectStep):
                envelope = {
                    "version": "1.0",
                    "kind": step.kind,
                    "id": step.exchange_id,
                    "body": step.body,
                }
            else:
                continue
            frames.append((f"{fixture.id} step {number}", envelope))
            body = envelope.get("body")
            if isinstance(body, dict) and body:
                broken = copy.deepcopy(envelope)
                broken["body"][next(iter(body))] = [None]
                frames.append((f"{fixture.id} step {number} broken", broken))
    return frames


def _decoded(payload: bytes) -> object:
    try:
        return decode_frame(payload)
    except ProtocolViolation as exc:
        return ("refused", exc.category, exc.pointer)


def test_every_frame_validates_and_decodes_the_same_both_ways(corpus) -> None:
    frames = _frames(corpus)
    raws = [s.payload for f in corpus for s in f.steps if isinstance(s, SendStep | RawSendStep)]
    assert len(frames) > 1000
    fast = [validate_message(envelope) for _, envelope in frames]
    fast_decoded = [_decoded(payload) for payload in raws]
    with fastpath.disabled():
        plain = [validate_message(envelope) for _, envelope in frames]
        plain_decoded = [_decoded(payload) for payload in raws]
    for (name, _), left, right in zip(frames, fast, plain, strict=True):
        assert left == right, name
    assert any(fast), "some broken frames are refused"
    assert fast_decoded == plain_decoded
