"""A loaded corpus holds what a case needs, not a copy per file of every large frame (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

from fakepeer.cases import load_fixtures, repository_root
from fakepeer.cases.model import KEPT_FRAME_BYTES, SendStep
from fakepeer.protocol.messages import encode_envelope

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
