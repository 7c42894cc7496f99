"""Derived variants: every fixture again under transformations that must not change an answer.

RFD 2: "Unknown fields are ignored", a receiver accepts any `1.x` (protocol §2), JSON text is JSON
text however it is spelled, and a case must not depend on what the host did before it. Each
variant rewrites the bench's *envelope* sends of a fixture (raw frames are sent as written) and is
reported as its own case, `FIXTURE@VARIANT`. A send that carries an HTTP fault keeps it: the
variant sends the same wrong request (unsigned, stale, oversized, ...), only spelled otherwise.
A variant that would change nothing for a fixture, or would push a frame across a size limit
(§4.3), is not derived for it.

`fresh-process` costs a host start and a §12.1 handshake per case (0.1 to 0.3 s for the reference
hosts, a hundred times a case), so it runs on a documented sample of the selection, the first
fixture (by id) of each category (`fresh_process_sample`); the cases it derives are listed and
reported like every other, so which ones ran is always visible.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from fakepeer.cases.model import ExpectStep, Fixture, RawSendStep, SendStep, Step
from fakepeer.protocol.encode import encode_envelope
from fakepeer.protocol.limits import MAX_FRAME_BYTES, MAX_ID_CHARS, MAX_REQUEST_BYTES
from fakepeer.protocol.version import KNOWN_VERSIONS
from fakepeer.transport.payload import HttpPayload

#: The member added by `unknown-members`; its value is deliberately not a tagged value.
UNKNOWN_MEMBER = "x-conform-unknown"
UNKNOWN_VALUE = {"added_by": "ryusen-conform", "list": [1, "two", None], "t": "str"}
HIGHER_MINOR = "1.7"

FRESH_PROCESS = "fresh-process"
#: Run only when `run` gets two or more SDKs: each lifecycle scenario served by a pair of them
#: (`fakepeer.server.fleet_suite`); never derived for one SDK.
FLEET_VARIANTS = ("fleet", "rolling")


def _with_unknown_members(envelope: dict) -> dict:
    """Unknown members at the envelope, body, target and every history entry (never in values)."""
    result = dict(envelope)
    result[UNKNOWN_MEMBER] = UNKNOWN_VALUE
    body = result.get("body")
    if isinstance(body, dict):
        body = dict(body)
        body[UNKNOWN_MEMBER] = UNKNOWN_VALUE
        if isinstance(body.get("target"), dict):
            body["target"] = dict(body["target"], **{UNKNOWN_MEMBER: UNKNOWN_VALUE})
        if isinstance(body.get("history"), list):
            body["history"] = [
                dict(entry, **{UNKNOWN_MEMBER: UNKNOWN_VALUE}) if isinstance(entry, dict) else entry
                for entry in body["history"]
            ]
        result["body"] = body
    return result


def _with_higher_minor(envelope: dict) -> dict:
    if envelope.get("version") not in KNOWN_VERSIONS:  # a fixture about versions keeps its own
        return envelope
    return dict(envelope, version=HIGHER_MINOR)


def _reordered(node: object) -> object:
    """Every object's members in reverse order, at every level (arrays keep their order)."""
    if isinstance(node, dict):
        return {key: _reordered(node[key]) for key in reversed(list(node))}
    if isinstance(node, list):
        return [_reordered(item) for item in node]
    return node


def _respelled(envelope: dict, budget: int | None = None) -> bytes:
    """The same JSON document spelled otherwise: whitespace everywhere, every ASCII letter and
    every non-ASCII character of every string (member names included) as a `\\u` escape.

    `budget`: stop with _OverBudget once the strings alone are spelled longer than that (the
    frame would cross a limit and be dropped: a 4 MiB request respells to 25 MB)."""
    return _spell(envelope, 0, [budget]).encode("ascii")


class _OverBudget(Exception):
    """The respelled frame is surely longer than its budget."""


#: Characters of a long string respelled at a time, so a frame over its budget stops early.
_CHUNK = 1 << 16


def _spell(node: object, depth: int, left: list[int | None]) -> str:
    pad = "\n" + "\t" * (depth + 1)
    if isinstance(node, dict):
        if not node:
            return "{ }"
        members = [
            f"{pad}{_string(key, left)} :\t{_spell(value, depth + 1, left)}"
            for key, value in node.items()
        ]
        return "{" + " ,".join(members) + "\r\n" + "\t" * depth + "}"
    if isinstance(node, list):
        if not node:
            return "[\t]"
        return "[ " + " , ".join(_spell(item, depth + 1, left) for item in node) + " ]"
    if isinstance(node, str):
        return _string(node, left)
    return json.dumps(node)  # numbers, booleans and null keep their spelling


def _spelled(char: str) -> str:
    """One character of a respelled string: an ASCII letter or a non-ASCII character as a `\\u`
    escape (a surrogate pair beyond the BMP), `/` as `\\/`, the rest as JSON writes it."""
    code = ord(char)
    if char.isascii() and char.isalpha():
        return f"\\u{code:04x}"
    if char == "/":
        return "\\/"
    if code < 0x80:
        return json.dumps(char)[1:-1]
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04X}"


class _Spellings(dict):
    """Code point -> `_spelled(character)`, each worked out once, for `str.translate`: the
    corpus's long strings (megabyte values of the limits fixtures) are respelled in C, not
    per-character Python, which was most of the bench's CPU under `--variants all`."""

    def __missing__(self, code: int) -> str:
        spelled = _spelled(chr(code))
        if len(self) < 0x10000:  # bounded: a fuzzed text may hold any of a million characters
            self[code] = spelled
        return spelled


_SPELLINGS = _Spellings()


def _string(text: str, left: list[int | None]) -> str:
    """A respelled string; `left[0]`, the budget still left (None: none), is spent on it."""
    if left[0] is None:
        return '"' + text.translate(_SPELLINGS) + '"'
    parts = []
    for start in range(0, len(text), _CHUNK):
        part = text[start : start + _CHUNK].translate(_SPELLINGS)
        left[0] -= len(part)
        if left[0] < 0:
            raise _OverBudget
        parts.append(part)
    return '"' + "".join(parts) + '"'


#: A variant's rewrite: the envelope and the size past which its frame is dropped anyway (a
#: rewrite may stop early with _OverBudget then).
EnvelopeRewrite = Callable[[dict, int], bytes]

_REWRITES: dict[str, EnvelopeRewrite] = {
    "unknown-members": lambda envelope, _: encode_envelope(_with_unknown_members(envelope)),
    "reordered": lambda envelope, _: encode_envelope(_reordered(envelope)),  # type: ignore[arg-type]
    "respelled": _respelled,
    "minor-version": lambda envelope, _: encode_envelope(_with_higher_minor(envelope)),
}

#: Every variant, in report order.
VARIANTS: tuple[str, ...] = (*_REWRITES, FRESH_PROCESS, *FLEET_VARIANTS)


def parse_variants(text: str) -> tuple[str, ...]:
    """`all`, `none`, or a comma-separated list of variant names; ValueError names a bad one."""
    text = text.strip()
    if text == "all":
        return VARIANTS
    if text == "none":
        return ()
    names = [name.strip() for name in text.split(",")]
    if len(names) > 1 and any(name in ("all", "none") for name in names):
        raise ValueError(
            f"{text!r}: all and none stand alone; give all, none, or a comma-separated list "
            f"from: {', '.join(VARIANTS)}"
        )
    unknown = [name for name in names if name not in VARIANTS]
    if unknown or not all(names):
        raise ValueError(
            f"unknown variant {', '.join(repr(n) for n in unknown) or repr('')}; "
            f"choose all, none, or from: {', '.join(VARIANTS)}"
        )
    return tuple(name for name in VARIANTS if name in names)


def derive(fixture: Fixture, variant: str) -> Fixture | None:
    """`fixture` under `variant`, or None when the variant changes nothing or crosses a limit.

    Each variant builds the fixture's steps anew: building draws the case's chosen HTTP nonces
    (`http.*-keeps-its-nonce`), and two variants sharing one would be each other's replay."""
    if variant in FLEET_VARIANTS:  # played by a pair of SDKs, never by one
        return None
    original = fixture.steps
    if variant == FRESH_PROCESS:
        return _variant_of(fixture, variant, tuple(original))
    rewrite = _REWRITES[variant]
    steps: list[Step] = []
    changed = False
    for step in original:
        if isinstance(step, SendStep):
            try:
                payload = _keeping_fault(step, rewrite(step.envelope, _budget(step)))
            except _OverBudget:
                return None
            if payload != step.payload:
                if _crosses_limit(step, payload):
                    return None
                changed = True
                step = replace(step, prepared=payload)
        steps.append(step)
    if not changed:
        return None
    renamed = _own_ids(tuple(steps), fixture.id, f"{fixture.id}@{variant}", rewrite)
    return _variant_of(fixture, variant, renamed or tuple(steps))


def _own_ids(
    steps: tuple[Step, ...], old: str, new: str, rewrite: EnvelopeRewrite
) -> tuple[Step, ...] | None:
    """The steps with the bench's exchange ids `OLD#n` renamed `NEW#n`, wherever a send or an
    expected body holds one (a `request_id`, say): a variant shares no exchange id with its
    fixture, so a late copy of an answer names the one case that sent it
    (`session/attribution`). None when a renamed id or frame would cross a limit."""
    prefix = f"{old}#"
    raw = {step.exchange_id for step in steps if isinstance(step, RawSendStep)}  # sent as written
    names = {
        step.exchange_id: f"{new}#{step.exchange_id[len(prefix) :]}"
        for step in steps
        if isinstance(step, SendStep | ExpectStep)
        and step.exchange_id.startswith(prefix)
        and step.exchange_id not in raw
    }
    if any(len(fresh) > MAX_ID_CHARS for fresh in names.values()):
        return None
    renamed: list[Step] = []
    for step in steps:
        if isinstance(step, SendStep):
            envelope = _renamed(step.envelope, names)
            if envelope != step.envelope:
                try:
                    payload = _keeping_fault(step, rewrite(envelope, _budget(step)))
                except _OverBudget:
                    return None
                if _crosses_limit(step, payload):
                    return None
                ident = names.get(step.exchange_id, step.exchange_id)
                step = replace(step, envelope=envelope, prepared=payload, exchange_id=ident)
        elif isinstance(step, ExpectStep):
            ident = names.get(step.exchange_id, step.exchange_id)
            body = _renamed(step.body, names)
            checked = step.checked and body == step.body  # a renamed id is checked no more
            step = replace(step, body=body, exchange_id=ident, checked=checked)
        renamed.append(step)
    return tuple(renamed)


def _keeping_fault(step: SendStep, payload: bytes) -> bytes:
    """The rewritten payload with the HTTP fault the step's own payload carries (D-HTTP-*):
    the variant sends the same wrong request, only spelled otherwise."""
    if isinstance(step.prepared, HttpPayload):
        return step.prepared.again(payload)
    return payload


def _renamed(node: object, names: dict[str, str]) -> object:
    """`node` with every string equal to a key of `names` replaced by its value."""
    if isinstance(node, str):
        return names.get(node, node)
    if isinstance(node, dict):
        return {key: _renamed(value, names) for key, value in node.items()}
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    return node


def _crosses_limit(step: SendStep, payload: bytes) -> bool:
    """A size limit of §4.3 that the original frame kept and the rewritten one would break."""
    return len(payload) > _budget(step)


def _budget(step: SendStep) -> int:
    """The longest rewritten frame that crosses no limit of §4.3 the original kept: the
    request limit for an invoke within it, else the frame limit."""
    limit = MAX_REQUEST_BYTES if step.envelope.get("kind") == "invoke" else MAX_FRAME_BYTES
    return limit if len(step.payload) <= limit else MAX_FRAME_BYTES


def _variant_of(fixture: Fixture, variant: str, steps: tuple[Step, ...]) -> Fixture:
    """Reported as `FIXTURE@VARIANT`, counted in a category of its own (`@VARIANT`)."""
    return replace(
        fixture,
        id=f"{fixture.id}@{variant}",
        category=f"@{variant}",
        held_steps=steps,
        source=None,
        variant=variant,
    )


def fresh_process_sample(fixtures: Iterable[Fixture]) -> frozenset[str]:
    """The ids `fresh-process` runs on: the first fixture (by id) of each category."""
    first: dict[str, str] = {}
    for fixture in fixtures:
        if fixture.variant is None and fixture.id < first.get(fixture.category, "\uffff"):
            first[fixture.category] = fixture.id
    return frozenset(first.values())


def with_variants(
    fixtures: Sequence[Fixture],
    variants: Iterable[str],
    sample_from: Iterable[Fixture] | None = None,
) -> list[Fixture]:
    """The fixtures, then every applicable derived variant of each (plain ids first).

    `fresh-process` is derived only for `fresh_process_sample(sample_from)` (default: of
    `fixtures`); a shard passes its whole selection so every shard agrees on the sample.
    """
    chosen = tuple(name for name in variants if name not in FLEET_VARIANTS)
    sample = fresh_process_sample(fixtures if sample_from is None else sample_from)
    derived = [
        variant
        for fixture in fixtures
        for name in chosen
        if name != FRESH_PROCESS or fixture.id in sample
        if (variant := derive(fixture, name)) is not None
    ]
    return [*fixtures, *derived]
