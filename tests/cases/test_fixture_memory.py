"""A loaded corpus holds what a case needs, not a copy per file of every large frame (issue 24)."""

from __future__ import annotations

import gc
import hashlib
import json
import weakref
from pathlib import Path

from fakepeer.cases import fixture_from_document, load_fixtures, repository_root
from fakepeer.cases.model import KEPT_FRAME_BYTES, ExpectStep, SendStep
from fakepeer.compare import Comparer
from fakepeer.protocol.encode import encode_envelope
from fakepeer.session.wire import WireLog

SOURCE = repository_root() / "fixtures" / "values" / "values.size-at-limit-accepted.json"


def _copies(folder: Path, count: int) -> list:
    document = json.loads(SOURCE.read_text(encoding="utf-8"))
    for copy in range(count):
        ident = f"{document['id']}-copy{copy}"
        path = folder / "values" / f"{ident}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**document, "id": ident}), encoding="utf-8")
    return load_fixtures([folder])


def _large_sends(fixture) -> list[SendStep]:
    return [
        s for s in fixture.steps if isinstance(s, SendStep) and len(s.payload) > KEPT_FRAME_BYTES
    ]


def test_a_large_frame_is_encoded_when_its_case_runs_not_kept(tmp_path: Path) -> None:
    (fixture,) = _copies(tmp_path, 1)
    (step,) = _large_sends(fixture)
    assert step.prepared is None
    assert step.payload == encode_envelope(step.envelope)


def test_copies_of_a_repeat_share_one_string(tmp_path: Path) -> None:
    first, second = _copies(tmp_path, 2)

    def strings(fixture) -> list[str]:
        (step,) = _large_sends(fixture)
        found: list[str] = []
        stack: list[object] = [step.envelope]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, str) and len(node) > KEPT_FRAME_BYTES:
                found.append(node)
        return found

    (one,), (other,) = strings(first), strings(second)
    assert one is other


def test_a_loaded_fixture_keeps_its_compressed_file_not_its_steps(tmp_path: Path) -> None:
    (fixture,) = _copies(tmp_path, 1)
    assert fixture.held_steps is None
    assert fixture.source is not None and len(fixture.source) < 4096  # the file is a few KiB
    built = fixture_from_document(json.loads(fixture.path.read_text(encoding="utf-8")))
    assert fixture.steps == built.steps  # built again the same way, ids and bytes included
    assert fixture.steps is not fixture.steps  # nothing of a built step stays with the fixture


def test_the_corpus_loaded_is_about_its_size_on_disk() -> None:
    fixtures = [f for f in load_fixtures() if f.lifecycle is None]
    kept = sum(len(f.source or b"") for f in fixtures)
    on_disk = sum(f.path.stat().st_size for f in fixtures)
    assert all(f.held_steps is None for f in fixtures)
    assert kept < on_disk / 2  # compressed; every expanded body and frame is built per case


def test_a_compared_step_keeps_its_prepared_expectation_not_the_comparer() -> None:
    """The comparer holds nothing per step: a case's steps die with all they hold."""
    (fixture,) = load_fixtures([SOURCE])
    comparer = Comparer(lambda envelope: [])
    expect = next(s for s in fixture.steps if isinstance(s, ExpectStep))
    answer = {"version": "1.0", "kind": expect.kind, "id": expect.exchange_id, "body": expect.body}
    assert comparer.compare(expect, answer) == []
    assert expect.memo  # prepared once, on the step
    assert not any(isinstance(v, dict | list) and v for v in vars(comparer).values())
    reference = weakref.ref(expect)
    del expect
    gc.collect()
    assert reference() is None


def test_a_large_sent_frame_is_logged_as_its_head_size_and_hash() -> None:
    """The last cases' wire logs are kept (to attribute a late answer): a 4 MiB frame sent by
    each would be kept with them, ten copies of a corpus side by side holding forty MiB."""
    payload = b'{"id":"x","body":"' + b"a" * (KEPT_FRAME_BYTES * 2) + b'"}'
    wire = WireLog()
    wire.sent(payload)
    (record,) = wire.records
    assert len(record.payload) <= 1024 and record.size == len(payload)
    assert record.sha256 == hashlib.sha256(payload).hexdigest()
    assert record.to_json()["truncated"] is True
    small = b'{"id":"y"}'
    wire.sent(small)
    assert wire.records[1].payload == small
