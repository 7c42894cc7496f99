"""`fixtures record`: play a draft's sends against an SDK and write what it answered, as a draft.

Why a separate draft file: an expectation must come from docs/protocol.md, never from what one
SDK printed. Recording only saves typing; the result is `<id>.recorded.json`, which `validate`
refuses until a person has checked every expect and saved it as `<id>.json`.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import atomic
from fakepeer.authoring.formatting import format_document
from fakepeer.authoring.validate import RECORDED_SUFFIX
from fakepeer.cases import FixtureError, fixture_from_document
from fakepeer.cases.model import RawSendStep, SendStep
from fakepeer.protocol import strictjson
from fakepeer.protocol.pointer import escape, split
from fakepeer.protocol.value_paths import value_positions
from fakepeer.session.sdk import SdkSession, SessionError, decode
from fakepeer.session.targets import command_target
from fakepeer.transport.errors import TransportError, TransportTimeout

DRAFT_NOTE = (
    "RECORDED DRAFT from {command!r}: every expect below is what this SDK sent, not what "
    "docs/protocol.md requires. Check each one against the protocol, fix it, then save the file "
    "as <id>.json."
)

#: Members an SDK chooses freely; recorded expects suggest `vary` for them when present.
SDK_CHOSEN = (
    ("error", "message"),
    ("sdk",),
    ("capacity", "max_concurrent"),
    ("first_source",),
    ("duplicate_source",),
)


class RecordError(Exception):
    """Recording cannot start or cannot be written; the message says why, for people.

    `status`: the exit status (2: bad input, or an SDK that failed the recording).
    """

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Recording:
    """The recorded draft document and what happened on the way."""

    document: dict
    frames: int = 0
    warnings: list[str] = field(default_factory=list)


def draft_path(draft: Path, fixture_id: str, out: Path | None) -> Path:
    """Where the draft goes: `--out`, else `<id>.recorded.json` beside the draft."""
    path = out if out is not None else draft.parent / f"{fixture_id}{RECORDED_SUFFIX}"
    if not path.name.endswith(RECORDED_SUFFIX):
        raise RecordError(
            f"{path}: a recording is written only to a file named *{RECORDED_SUFFIX}, so it can "
            "never replace an accepted fixture"
        )
    return path


def load_draft(draft: Path) -> dict:
    """Read the draft fixture document (JSON object with at least id and steps)."""
    try:
        document = strictjson.loads(draft.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"{draft}: cannot read the draft: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("id"), str):
        raise RecordError(f"{draft}: /id: expected a fixture document with a string id")
    if not isinstance(document.get("steps"), list):
        raise RecordError(f"{draft}: /steps: expected an array of steps")
    return document


def _sends(document: dict, draft: Path) -> list[tuple[int, SendStep | RawSendStep]]:
    """The draft's send steps with their index, built by the shared loader (macros, ids)."""
    probe = copy.deepcopy(document)
    indexed = [
        (i, step)
        for i, step in enumerate(probe["steps"])
        if isinstance(step, dict) and not ({"expect"} & set(step))
    ]
    probe["steps"] = [step for _, step in indexed] + [{"expect": {"kind": "completed", "body": {}}}]
    try:
        fixture = fixture_from_document(probe, draft)
    except FixtureError as exc:
        raise RecordError(str(exc)) from None
    built = [step for step in fixture.steps if isinstance(step, SendStep | RawSendStep)]
    return [(index, step) for (index, _), step in zip(indexed, built, strict=True)]


def suggested_vary(envelope: dict) -> list[str]:
    """`vary` pointers for SDK-chosen members present in the recorded frame.

    Besides the fixed members, an error record carried as a tagged value (a program's
    `{"caught": …}`) has an SDK-chosen message too.
    """
    body = envelope.get("body")
    pointers = []
    for path in SDK_CHOSEN:
        node: object = body
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            pointers.append("/body/" + "/".join(path))
    pointers.extend(_tagged_error_messages(body, "/body"))
    return pointers


def _tagged_error_messages(node: object, pointer: str) -> list[str]:
    """Pointers of `message` members of error records inside tagged `object` values."""
    found = []
    if isinstance(node, dict):
        if node.get("t") == "object" and isinstance(node.get("v"), dict):
            members = node["v"]
            if {"category", "message", "retryable"} <= set(members):
                found.append(f"{pointer}/v/message")
        for key, value in node.items():
            found.extend(_tagged_error_messages(value, f"{pointer}/{escape(key)}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_tagged_error_messages(value, f"{pointer}/{index}"))
    return found


def record(draft: Path, command: str, *, first_wait: float = 5.0, settle: float = 0.5) -> Recording:
    """Run the draft's sends against the SDK `command`; return the draft with recorded expects."""
    document = load_draft(draft)
    sends = _sends(document, draft)
    try:
        target = command_target(command)
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    session = SdkSession(target.factory)
    result = copy.deepcopy(document)
    steps: list[dict] = []
    recording = Recording(result)
    supplied = _strings(document)
    templates = _draft_expects(document)
    try:
        session.ensure_started(time.monotonic() + max(first_wait, 10.0))
        session.reset(time.monotonic() + first_wait)
        for index, step in sends:
            steps.append(document["steps"][index])
            session.send(step.payload, time.monotonic() + first_wait)
            wait = first_wait
            while True:
                try:
                    payload = session.receive(time.monotonic() + wait)
                except TransportTimeout:
                    break
                wait = settle
                envelope = decode(payload)
                recording.frames += 1
                if envelope.get("id") != step.exchange_id:
                    recording.warnings.append(
                        f"step {index}: the SDK answered with id {envelope.get('id')!r}, the "
                        f"exchange id is {step.exchange_id!r}"
                    )
                template = templates.get(index, [])
                shape = template.pop(0) if template else None
                body = in_author_order(envelope.get("kind"), envelope.get("body"), shape)
                body = plain_values(envelope, body)
                recorded: dict = {"expect": {"kind": envelope.get("kind"), "body": body}}
                vary = [
                    pointer
                    for pointer in suggested_vary(envelope)
                    if not _supplied_by_fixture(envelope, pointer, supplied)
                ]
                if vary:
                    recorded["vary"] = vary
                steps.append(recorded)
            if isinstance(step, SendStep) and step.envelope.get("kind") == "invoke":
                last = steps[-1]
                if "expect" in last:  # the effect trace of this pass belongs on its answer
                    _, answer = session.request(
                        "conform.trace", {}, time.monotonic() + first_wait, None
                    )
                    events = (answer.get("body") or {}).get("events")
                    if isinstance(events, list):
                        last["trace"] = {"events": events}
    except (SessionError, TransportError) as exc:
        reason = getattr(exc, "reason", str(exc))
        stderr = (getattr(exc, "stderr", "") or session.discard()).rstrip()
        session.shutdown()
        raise RecordError(
            f"the session with {command!r} ended early after {recording.frames} recorded "
            f"frame(s): {reason}; nothing was written"
            + (f"\nthe host's stderr (last lines):\n{stderr}" if stderr else "")
        ) from None
    if recording.frames == 0:  # a host that hangs (or ignores the draft) recorded nothing
        stderr = session.stderr_tail()
        session.shutdown()
        message = f"the SDK answered none of the draft's sends within {first_wait:g} s (it hangs?)"
        raise RecordError(_failed(message, stderr))
    session.shutdown()
    result["steps"] = steps
    title = str(document.get("title", ""))
    result["title"] = title if title.startswith("DRAFT: ") else "DRAFT: " + title
    note = DRAFT_NOTE.format(command=command)
    result["notes"] = note + (
        " Original notes: " + document["notes"] if document.get("notes") else ""
    )
    return recording


def _strings(node: object) -> set[str]:
    """Every string the draft itself contains (values the fixture supplies to the SDK)."""
    found: set[str] = set()
    if isinstance(node, str):
        found.add(node)
    elif isinstance(node, dict):
        for value in node.values():
            found |= _strings(value)
    elif isinstance(node, list):
        for value in node:
            found |= _strings(value)
    return found


def _supplied_by_fixture(envelope: dict, pointer: str, supplied: set[str]) -> bool:
    """A suggested `vary` is not needed when the fixture itself supplied that exact text
    (an error message a program step raises is the fixture's, not the SDK's choice)."""
    from fakepeer.protocol.pointer import resolve

    try:
        value = resolve(envelope, pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return False
    return isinstance(value, str) and value in supplied


def _draft_expects(document: dict) -> dict[int, list[object]]:
    """The author's own expect bodies in the draft, by the index of the send they follow."""
    templates: dict[int, list[object]] = {}
    current: int | None = None
    for index, step in enumerate(document.get("steps", [])):
        if not isinstance(step, dict):
            continue
        if "expect" in step and current is not None:
            expect = step["expect"]
            templates[current].append(expect.get("body") if isinstance(expect, dict) else None)
        elif "expect" not in step:
            current = index
            templates[current] = []
    return templates


def in_author_order(kind: object, body: object, template: object = None) -> object:
    """The recorded body with its keys in the author's order (their draft expect, if any),
    else in the order docs/protocol.md §14 lists the kind's members; the rest as recorded."""
    from fakepeer.protocol.messages import KINDS

    order: list[str] = []
    if isinstance(template, dict):
        order = list(template)
    elif isinstance(kind, str) and kind in KINDS:
        order = list(KINDS[kind].members)
    return _reorder(body, order, template)


def _reorder(node: object, order: list[str], template: object) -> object:
    if isinstance(node, list):
        items = template if isinstance(template, list) else []
        return [
            _reorder(
                item,
                _keys(items[i] if i < len(items) else None),
                items[i] if i < len(items) else None,
            )
            for i, item in enumerate(node)
        ]
    if not isinstance(node, dict):
        return node
    keys = [key for key in order if key in node] + [key for key in node if key not in order]
    shape = template if isinstance(template, dict) else {}
    return {key: _reorder(node[key], _keys(shape.get(key)), shape.get(key)) for key in keys}


def _keys(template: object) -> list[str]:
    return list(template) if isinstance(template, dict) else []


def _failed(message: str, stderr: str) -> str:
    """The failure, with the host's stderr tail when it said anything: nothing is recorded."""
    tail = "\n".join(stderr.rstrip().splitlines()[-20:])
    return f"{message}; nothing was recorded" + (f"\nthe SDK's stderr:\n{tail}" if tail else "")


def plain_values(envelope: dict, body: object) -> object:
    """`body` with each tagged value of the answer written `{"$plain": ...}` where plain notation
    says exactly the same (docs/host-contract.md §13.1): a reviewer reads `{"$plain": [1, "a"]}`
    at a glance; a value plain notation cannot express (bytes, u64, a float that is not one)
    stays tagged."""
    if not isinstance(body, dict):
        return body
    result = copy.deepcopy(body)
    for pointer, value in value_positions(envelope):
        parts = split(pointer)[1:]  # below /body
        if not parts:
            continue
        candidate = _untagged(value)
        if candidate is _NO_PLAIN or _expands_to(candidate) != value:
            continue
        parent = result
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        parent[int(last) if isinstance(parent, list) else last] = {"$plain": candidate}
    return result


_NO_PLAIN = object()


def _untagged(value: object) -> object:
    """The plain notation of a tagged value, or _NO_PLAIN (the caller checks the round trip)."""
    if not isinstance(value, dict):
        return _NO_PLAIN
    kind, inner = value.get("t"), value.get("v")
    if kind == "null":
        return None
    if kind in ("str", "bool"):
        return inner
    if kind == "i64" and isinstance(inner, str):
        try:
            return int(inner)
        except ValueError:
            return _NO_PLAIN
    if kind == "array" and isinstance(inner, list):
        items = [_untagged(item) for item in inner]
        return _NO_PLAIN if any(item is _NO_PLAIN for item in items) else items
    if kind == "object" and isinstance(inner, dict):
        members = {key: _untagged(item) for key, item in inner.items()}
        return _NO_PLAIN if any(item is _NO_PLAIN for item in members.values()) else members
    return _NO_PLAIN


def _expands_to(candidate: object) -> object:
    from fakepeer.cases.macros import MacroError, expand

    try:
        return expand({"$plain": candidate}, ())
    except MacroError:
        return _NO_PLAIN


def write_recording(recording: Recording, path: Path, force: bool) -> None:
    """Write the draft; an existing file is replaced only with `force`."""
    if path.exists() and not force:
        raise RecordError(f"{path} exists; pass --force to replace this draft")
    atomic.write_text(path, format_document(recording.document))
