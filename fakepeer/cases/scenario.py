"""A small Python API for writing fixtures: the same step dicts as the JSON files, with less typing.

Scenario("discovery.first", "Discovery declares the first step", section="SDK invocation",
         quote="In discovery, ...", category="discovery")
    .send("invoke", {...})
    .expect("declared", {...}, vary=["/body/declaration/name"])
    .write(Path("fixtures"))
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from fakepeer import atomic
from fakepeer.cases.loader import checked, fixture_from_document
from fakepeer.cases.model import Fixture

REFUSAL_MESSAGE_POINTER = "/body/error/message"


class Scenario:
    """Builds one fixture document step by step; every method returns the scenario for chaining."""

    def __init__(
        self,
        id: str,
        title: str,
        *,
        section: str | None = None,
        quote: str | None = None,
        protocol: str | None = None,
        rule: Mapping[str, str] | None = None,
        category: str,
        level: str = "required",
        capabilities: Iterable[str] = (),
        notes: str | None = None,
    ) -> None:
        rule_document = dict(rule or {})
        for key, value in (("section", section), ("quote", quote), ("protocol", protocol)):
            if value is not None:
                rule_document[key] = value
        self.document: dict = {
            "id": id,
            "title": title,
            "rule": rule_document,
            "category": category,
            "level": level,
            "capabilities": list(capabilities),
            "steps": [],
        }
        if notes is not None:
            self.document["notes"] = notes

    @property
    def id(self) -> str:
        return self.document["id"]

    def send(
        self,
        kind: str,
        body: Mapping,
        *,
        id: str | None = None,
        version: str | None = None,
        extra: Mapping | None = None,
    ) -> Scenario:
        """Send one envelope (a request opens a new exchange; a server answer reuses it)."""
        send: dict = {"kind": kind, "body": dict(body)}
        if id is not None:
            send["id"] = id
        if version is not None:
            send["version"] = version
        if extra is not None:
            send["extra"] = dict(extra)
        return self._step({"send": send})

    def send_raw(self, text: str) -> Scenario:
        """Send one frame whose payload is this text's UTF-8."""
        return self._step({"send_raw": text})

    def send_raw_base64(self, payload: bytes | str) -> Scenario:
        """Send one frame of exact bytes (given as bytes, or already as base64 text)."""
        if isinstance(payload, bytes):
            payload = base64.b64encode(payload).decode("ascii")
        return self._step({"send_raw_base64": payload})

    def expect(
        self,
        kind: str,
        body: Mapping,
        *,
        vary: Iterable[str] = (),
        derive: Mapping[str, str] | None = None,
        recommend: Mapping[str, str] | None = None,
        match: Mapping[str, str] | None = None,
        trace: Iterable[Mapping] | None = None,
        trace_match: str = "exact",
        trace_only: Iterable[str] = (),
    ) -> Scenario:
        """Expect the SDK's next frame to have this kind and body (minus `vary` paths).

        `trace`: the effect trace (docs/host-contract.md §12.4) the invoke this answers must leave.
        `recommend`: recommended parts (pointer pattern -> decision): a difference only there
        is a warning (docs/fixtures.md "Levels inside a fixture").
        """
        step: dict = {"expect": {"kind": kind, "body": dict(body)}}
        if trace is not None:
            step["trace"] = {"events": [dict(event) for event in trace]}
            if trace_match != "exact":
                step["trace"]["match"] = trace_match
            if trace_only:
                step["trace"]["only"] = list(trace_only)
        vary = list(vary)
        if vary:
            step["vary"] = vary
        if recommend:
            step["recommend"] = dict(recommend)
        if match:
            step["match"] = dict(match)
        if derive:
            step["derive"] = dict(derive)
        return self._step(step)

    def expect_refusal(self, category: str, pointer: str, *, vary: Iterable[str] = ()) -> Scenario:
        """Expect a `protocol_error` (§10.9) with this category and pointer; any message."""
        error = {
            "category": category,
            "message": "",
            "retryable": False,
            "details": {"pointer": pointer},
        }
        return self.expect(
            "protocol_error", {"error": error}, vary=[REFUSAL_MESSAGE_POINTER, *vary]
        )

    def to_document(self) -> dict:
        """The fixture file's JSON document (macros left in place)."""
        return json.loads(json.dumps(self.document))

    def build(self) -> Fixture:
        """Check the document and return the runnable Fixture; raises FixtureError. Its
        expects are marked checked when its messages pass, as when a file loads."""
        return checked(fixture_from_document(self.to_document()))

    def to_json(self) -> str:
        """The file text: two-space indentation, UTF-8, trailing newline."""
        return json.dumps(self.to_document(), indent=2, ensure_ascii=False) + "\n"

    def write(self, fixtures_root: Path | str) -> Path:
        """Check the fixture, then write `<fixtures_root>/<category>/<id>.json`; return its path."""
        self.build()
        path = Path(fixtures_root) / self.document["category"] / f"{self.id}.json"
        atomic.write_text(path, self.to_json())
        return path

    def _step(self, step: dict) -> Scenario:
        self.document["steps"].append(step)
        return self
