"""Comparing an SDK frame with a fixture's expectation (docs/fixtures.md "Comparison").

Fast path, after `vary` paths are removed from both sides: Python `==` when the expectation holds
no numbers or bools (there it is JSON equality), else sorted JSON text, else RFC 8785 canonical
bytes. Only on a mismatch does deepdiff run, to list each differing JSON pointer with both values.
Schema validation (every SDK frame) and `derive` checks report their own kinds of finding.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from fakepeer.cases.model import ExpectStep
from fakepeer.protocol import fastpath
from fakepeer.protocol.canonical import CanonicalizationError, canonical_bytes
from fakepeer.protocol.pointer import VaryPattern, join, resolve, split
from fakepeer.protocol.schema import envelope_members_valid, validate_message
from fakepeer.protocol.version import KNOWN_VERSIONS, PROTOCOL_VERSION, is_supported


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


MISSING = _Missing()
VARIED = "<varies>"  # stands in for a varied array element, so later indexes keep their place

FindingKind = Literal["value", "schema", "derive", "version", "invariant", "trace"]
#: A finding of a `required` part fails its case; one of a `recommended` part only (a pointer
#: the expect lists under `recommend`, or any part of a `recommended` fixture but an invariant)
#: is a warning (docs/fixtures.md "Levels inside a fixture").
FindingLevel = Literal["required", "recommended"]


@dataclass(frozen=True)
class Finding:
    """One reason an SDK frame does not meet its expectation.

    `step` names the exchange (`step 3, expect completed`); `consequence` marks a finding of a
    later step than the case's first failing one: it may only follow from that first fault.
    """

    kind: FindingKind
    pointer: str
    message: str
    expected: object = MISSING
    actual: object = MISSING
    step: str = ""
    consequence: bool = False
    level: FindingLevel = "required"
    #: For a recommended finding: the decision (docs/decisions.md) the recommended value comes
    #: from, as the fixture names it; "" when none is named.
    rule: str = ""

    @property
    def recommended(self) -> bool:
        return self.level == "recommended"

    def to_json(self) -> dict:
        record: dict = {"kind": self.kind, "pointer": self.pointer, "message": self.message}
        if self.expected is not MISSING:
            record["expected"] = self.expected
        if self.actual is not MISSING:
            record["actual"] = self.actual
        if self.step:
            record["step"] = self.step
        if self.consequence:
            record["consequence"] = True
        if self.recommended:
            record["level"] = "recommended"
            if self.rule:
                record["rule"] = self.rule
        return record

    def as_recommended(self, rule: str = "") -> Finding:
        """This finding, of a recommended part (a warning)."""
        return replace(self, level="recommended", rule=rule or self.rule)

    def at(self, step: str, consequence: bool) -> Finding:
        """This finding, naming the exchange it came from."""
        return replace(self, step=step, consequence=consequence)

    def __str__(self) -> str:
        head, *rest = self.message.split("\n")
        tag = self.kind
        if self.recommended:
            tag += f", recommended{f' ({self.rule})' if self.rule else ''}"
        lines = [f"[{tag}] {self.pointer or '(root)'}: {head}", *(f"    {r}" for r in rest)]
        return "\n".join(lines)


Validator = Callable[[dict], Sequence[object]]


def default_validator() -> Validator:
    """The protocol model's per-kind JSON Schema validation (cached validators)."""
    from fakepeer.protocol.schema import validate_message

    return validate_message


# ----------------------------------------------------------------------------- vary patterns


def remove_varied(document: object, patterns: Sequence[VaryPattern]) -> object:
    """Return a copy of `document` without the members the patterns match (the root never goes)."""
    if not patterns:
        return document
    return _strip(document, (), patterns)


def _strip(node: object, path: tuple[str, ...], patterns: Sequence[VaryPattern]) -> object:
    live = [p for p in patterns if p.may_match_below(path)]
    if not live:
        return node
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            child = (*path, key)
            if any(p.matches(child) for p in live):
                continue
            result[key] = _strip(value, child, live)
        return result
    if isinstance(node, list):
        items = []
        for index, value in enumerate(node):
            child = (*path, str(index))
            items.append(
                VARIED if any(p.matches(child) for p in live) else _strip(value, child, live)
            )
        return items
    return node


# ----------------------------------------------------------------------------- comparison


class _Expectation:
    """One expect step made ready to compare: vary patterns, the compared document, and whether
    plain `==` decides equality (see `plain_json`); its sorted JSON text only when needed."""

    __slots__ = ("patterns", "expected", "plain", "_text", "recommended", "required")

    def __init__(self, step: ExpectStep) -> None:
        pointers = [*step.vary, *(pointer for pointer, _ in step.derive)]
        self.patterns = tuple(VaryPattern(pointer) for pointer in pointers)
        self.expected = remove_varied(step.expected, self.patterns)
        self.plain = plain_json(self.expected)
        self._text: str | None = None
        #: The recommended parts (pattern, decision), and the expectation without them.
        self.recommended = tuple((VaryPattern(p), rule) for p, rule in step.recommend)
        self.required = remove_varied(self.expected, [p for p, _ in self.recommended])

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _sorted_json(self.expected)
        return self._text

    def identical(self, actual: object) -> bool:
        """Equal with the same JSON types everywhere (no `1` for `1.0` or `true`): a fast path,
        False only means "not shown identical"."""
        try:
            if self.plain and self.expected == actual:
                return True
        except RecursionError:  # too deep for `==`: let the slower checks decide
            pass
        return _sorted_json(actual) == self.text


class Comparer:
    """Compares SDK frames with expect steps; each step keeps its prepared expectation in its
    own `memo`, so it lives as long as the step (a case's steps built from a fixture's file
    are dropped with all they hold when the case is done)."""

    def __init__(self, validator: Validator | None = None) -> None:
        self._validator = validator

    @property
    def validator(self) -> Validator:
        if self._validator is None:
            self._validator = default_validator()
        return self._validator

    def compare(self, step: ExpectStep, envelope: dict) -> list[Finding]:
        """Every finding for one decoded SDK frame; an empty list means the step passes."""
        findings: list[Finding] = []
        version = envelope.get("version")
        if version != PROTOCOL_VERSION and not is_supported(version):
            findings.append(
                Finding(
                    "version",
                    "/version",
                    "an SDK frame must carry a 1.x version",
                    expected="1.x",
                    actual=envelope.get("version", MISSING),
                )
            )
        expectation = self._prepared(step)
        actual = remove_varied(
            {"kind": envelope.get("kind"), "body": envelope.get("body")}, expectation.patterns
        )
        # JSON equality (RFC 8785), cheapest test first: identical (types included) settles it
        identical = fastpath.enabled() and expectation.identical(actual)
        if identical and step.checked and self._default_checks():
            if envelope_members_valid(envelope):
                # kind and body are what loading checked (schema and §3 value rules): the
                # frame's checks have nothing to find, so it is not walked again
                return findings
        for violation in self.validator(envelope):
            findings.append(_schema_finding(violation))
        if not identical and not canonically_equal(expectation.expected, actual):
            findings.extend(_leveled(expectation, actual))
        if step.match and not identical:
            findings.extend(check_matched(step.match, step.expected, envelope))
        if step.derive:
            findings.extend(check_derived(step.derive, envelope))
        return findings

    def spelled_as_expected(self, step: ExpectStep, payload: bytes) -> dict | None:
        """The answer `payload` decodes to, when it is the checked expectation byte for byte as
        hosts usually write it: compact UTF-8 JSON, a version this bench speaks, the step's id,
        and either the envelope's members in §2's order with the body as the fixture orders it,
        or every member sorted (as RFC 8785 writes most documents). Such a frame decodes to
        exactly that envelope, valid and equal to what is expected, so it is neither decoded
        nor walked. None otherwise, and then the frame is decoded and compared as any (a fast
        path: bytes that differ prove nothing)."""
        if not (step.checked and self._default_checks()):
            return None
        if payload.startswith(_ANSWER_HEAD):  # {"version":"V","kind":..,"id":..,"body":..}
            end = payload.find(b'"', len(_ANSWER_HEAD), len(_ANSWER_HEAD) + 8)
            version = payload[len(_ANSWER_HEAD) : end]
            tail = _spelling(step, _ANSWER_HEAD)
            if len(payload) - end != len(tail) or not payload.endswith(tail):
                return None
        elif payload.startswith(_SORTED_HEAD):  # {"body":..,"id":..,"kind":..,"version":"V"}
            head = _spelling(step, _SORTED_HEAD)
            if not payload.startswith(head) or not payload.endswith(b'"}'):
                return None
            version = payload[len(head) : -2]
        else:
            return None
        text = version.decode("ascii", "replace")
        if text not in KNOWN_VERSIONS:
            return None
        return {"version": text, "kind": step.kind, "id": step.exchange_id, "body": step.body}

    def _default_checks(self) -> bool:
        """The fast paths are on and frames get the protocol's own validation."""
        return fastpath.enabled() and self._validator in (None, validate_message)

    def _prepared(self, step: ExpectStep) -> _Expectation:
        cached = step.memo.get(_Expectation)
        if cached is None:
            cached = step.memo[_Expectation] = _Expectation(step)
        return cached


def _leveled(expectation: _Expectation, actual: object) -> list[Finding]:
    """The differences of an answer that is not equal to its expectation, each marked with its
    part's level: a difference at or below a `recommend` pointer is recommended, every other one
    required. When the answer equals the expectation without its recommended parts, every
    difference is recommended (deepdiff may name a parent, or none, for a number type)."""
    found = explain(expectation.expected, actual)
    if not expectation.recommended:
        return found
    patterns = [pattern for pattern, _ in expectation.recommended]
    only_recommended = canonically_equal(expectation.required, remove_varied(actual, patterns))
    leveled = []
    for finding in found:
        rule = _recommending(expectation.recommended, finding.pointer)
        if rule is None and only_recommended:
            rule = next((r for _, r in expectation.recommended), "")
        leveled.append(finding if rule is None else finding.as_recommended(rule))
    if not only_recommended and all(finding.recommended for finding in leveled):
        leveled.append(  # the required parts differ, though no listed pointer shows where
            Finding(
                "value",
                "",
                "the answer differs outside its recommended parts",
                expected=expectation.required,
                actual=remove_varied(actual, patterns),
            )
        )
    return leveled


def _recommending(recommended: Sequence[tuple[VaryPattern, str]], pointer: str) -> str | None:
    """The decision of the recommended part `pointer` lies in (at or below), or None."""
    path = tuple(split(pointer)) if pointer else ()
    for pattern, rule in recommended:
        if any(pattern.matches(path[:length]) for length in range(1, len(path) + 1)):
            return rule
    return None


#: Encoders made once (`json.dumps` with options builds one per call, a third of its cost on a
#: small document): compact UTF-8, the same sorted, and sorted with ASCII escapes.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SORTED_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_SORTED_TEXT = json.JSONEncoder(separators=(",", ":"), sort_keys=True)

#: How an answer in a usual spelling begins: compact, members in §2's order, or sorted.
_ANSWER_HEAD = b'{"version":"'
_SORTED_HEAD = b'{"body":'


def _spelling(step: ExpectStep, head: bytes) -> bytes:
    """The bytes of the step's answer in the spelling that starts with `head`, less its version:
    what follows the version (§2's order) or what precedes it (sorted); kept in the step's memo."""
    spelled = step.memo.get(head)
    if spelled is None:
        kind, ident = _compact_text(step.kind), _compact_text(step.exchange_id)
        if head == _ANSWER_HEAD:
            spelled = b'","kind":%s,"id":%s,"body":%s}' % (kind, ident, _compact(step.body))
        else:
            body = _SORTED_COMPACT.encode(step.body)
            spelled = b'{"body":%s,"id":%s,"kind":%s,"version":"' % (body.encode(), ident, kind)
        step.memo[head] = spelled
    return spelled


def _compact(document: object) -> bytes:
    """Compact JSON as hosts usually write it (UTF-8, no spaces)."""
    return _COMPACT.encode(document).encode("utf-8")


def _compact_text(text: str) -> bytes:
    """A JSON string as `_compact` writes it; the common kind or id needs no escaping."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return b'"%s"' % text.encode("ascii")
    return _compact(text)


def plain_json(document: object) -> bool:
    """True when `document` holds only objects, arrays, strings and nulls (no numbers, no bools).

    Then Python's `==` is JSON equality with it: a string only equals a string and None only
    None, so an equal document has the same types everywhere. With numbers or bools it is not
    (`True == 1 == 1.0` in Python), and the sorted-text and RFC 8785 checks decide instead.
    Exact types only (a dict subclass counts as not plain): a conservative answer is safe.
    """
    stack = [document]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is dict:
            push(node.values())  # type: ignore[attr-defined]
        elif kind is list:
            push(node)  # type: ignore[arg-type]
        elif kind is not str and node is not None:
            return False
    return True


def _sorted_json(document: object) -> str:
    """A C-speed normal form: equal texts imply equal JSON; unequal texts go to the RFC 8785 check.

    (It is stricter than JSON equality only for numbers, e.g. 1 vs 1.0, which RFC 8785 settles.)
    """
    try:
        return _SORTED_TEXT.encode(document)
    except (TypeError, ValueError):
        return "\0unencodable"


def canonically_equal(left: object, right: object) -> bool:
    """JSON equality as RFC 8785 defines it: equal canonical encodings."""
    try:
        return canonical_bytes(left) == canonical_bytes(right)
    except CanonicalizationError:
        return False


def compare_frame(
    step: ExpectStep, envelope: dict, validator: Validator | None = None
) -> list[Finding]:
    """One-shot comparison (see Comparer for the cached form)."""
    return Comparer(validator).compare(step, envelope)


def _schema_finding(violation: object) -> Finding:
    pointer = getattr(violation, "pointer", "")
    message = getattr(violation, "message", str(violation))
    return Finding("schema", pointer, f"schema violation: {message}")


# ----------------------------------------------------------------------------- explanations


def explain(expected: object, actual: object) -> list[Finding]:
    """List each differing JSON pointer with the expected and actual values (deepdiff).

    No key is hidden: deepdiff skips keys that start with `__` unless told otherwise, and a
    frame's `__proto__` member is as much a difference as any other.
    """
    from deepdiff import DeepDiff
    from deepdiff.helper import NotPresent

    diff = DeepDiff(expected, actual, view="tree", verbose_level=2, ignore_private_variables=False)
    findings = []
    for levels in diff.values():
        for level in levels:
            path = level.path(output_format="list")
            before = MISSING if isinstance(level.t1, NotPresent) else level.t1
            after = MISSING if isinstance(level.t2, NotPresent) else level.t2
            as_bytes = _is_bytes_position(expected, actual, path)
            findings.append(
                Finding(
                    "value",
                    join(path),
                    describe(before, after, as_bytes=as_bytes),
                    expected=before,
                    actual=after,
                )
            )
    if not findings:  # equal as Python values but not as JSON (1 vs 1.0, True vs 1)
        findings.append(
            Finding(
                "value",
                "",
                "the documents differ in JSON number or boolean types",
                expected=expected,
                actual=actual,
            )
        )
    findings.sort(key=lambda finding: finding.pointer)
    return findings


def _is_bytes_position(expected: object, actual: object, path: Sequence[object]) -> bool:
    """Whether `path` holds base64 bytes: the `v` of a tagged `bytes` value, or manifest
    `contents` (docs/protocol.md §3.1, §8.3)."""
    if not path:
        return False
    if path[-1] == "contents":
        return True
    if path[-1] != "v":
        return False
    for document in (expected, actual):
        try:
            parent = resolve(document, join(path[:-1]))
        except KeyError:
            continue
        if isinstance(parent, dict) and parent.get("t") == "bytes":
            return True
    return False


def describe(before: object, after: object, *, as_bytes: bool = False, limit: int = 160) -> str:
    """`expected X, got Y` for short values. Long values go on two aligned lines, each elided
    to the same window around the first difference (never cut before it); base64 bytes are
    shown decoded, as UTF-8 text or hex, above their base64."""
    if as_bytes and isinstance(before, str) and isinstance(after, str):
        left, right = _decoded(before), _decoded(after)
        if left is not None and right is not None:
            shown = _elide_pair(left[0], right[0], limit)
            b64 = _elide_pair(render(before, None), render(after, None), limit)
            return (
                "bytes differ:\n"
                f"expected {shown[0]} ({left[1]})\n"
                f"     got {shown[1]} ({right[1]})\n"
                f"expected base64 {b64[0]}\n"
                f"     got base64 {b64[1]}"
            )
    texts = render(before, None), render(after, None)
    if len(texts[0]) + len(texts[1]) <= limit:
        return f"expected {texts[0]}, got {texts[1]}"
    left, right = _elide_pair(*texts, limit)
    return f"values differ:\nexpected {left}\n     got {right}"


def _decoded(text: str) -> tuple[str, str] | None:
    """(shown text, how it is shown) of base64 bytes: UTF-8 text, or hex."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        return _visible(data.decode("utf-8")), "UTF-8"
    except UnicodeDecodeError:
        return data.hex(" "), "hex"


def _visible(text: str) -> str:
    """Text in backticks, control characters escaped, so what is shown is what is there."""
    shown = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
    return f"`{shown}`"


def _elide_pair(left: str, right: str, limit: int) -> tuple[str, str]:
    """Both texts cut to about `limit` characters around their first difference, never
    before it: `…` marks what was left out and the same offset is kept in both."""
    if len(left) <= limit and len(right) <= limit:
        return left, right
    first = next(
        (i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b),
        min(len(left), len(right)),
    )
    start = max(0, first - limit // 3)
    return _window(left, start, limit), _window(right, start, limit)


def _window(text: str, start: int, limit: int) -> str:
    end = start + limit
    head = f"…[{start} chars]" if start else ""
    tail = f"[{len(text) - end} chars]…" if end < len(text) else ""
    return head + text[start:end] + tail


def render(value: object, limit: int | None = 200) -> str:
    """Compact JSON for a diff line, cut to `limit` characters (None: never cut)."""
    if value is MISSING:
        return "(absent)"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates as \\udXXX
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def diff_text(findings: Iterable[Finding]) -> str:
    """The findings as lines for people, under the step each came from; the steps after the
    first failing one are marked as possible consequences of it."""
    lines: list[str] = []
    current = None
    for finding in findings:
        if finding.step and finding.step != current:
            current = finding.step
            note = " (after the first failing step: may be a consequence)"
            lines.append(f"{finding.step}{note if finding.consequence else ''}:")
        text = str(finding)
        lines.extend(f"  {line}" for line in text.split("\n")) if finding.step else lines.append(
            text
        )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- match


def check_matched(
    match: Iterable[tuple[str, str]], expected: dict, envelope: dict
) -> list[Finding]:
    """For each `pointer -> json | json_ordered`: the answer's base64 JSON text there parses to
    the document the expected text parses to (a required check; the exact bytes are usually a
    recommended part beside it)."""
    findings = []
    for pointer, how in match:
        want = _json_document(_at(expected, pointer))
        got = _json_document(_at(envelope, pointer))
        ordered = how == "json_ordered"
        if want is not _NOT_JSON and got is not _NOT_JSON and _same_json(want, got, ordered):
            continue
        shown = "not base64 of a JSON text" if got is _NOT_JSON else render(got)
        findings.append(
            Finding(
                "value",
                pointer,
                f"the bytes must parse to the expected JSON document"
                f"{' with its members in order' if ordered else ''}: expected {render(want)}, "
                f"got {shown}",
                expected=_at(expected, pointer),
                actual=_at(envelope, pointer),
            )
        )
    return findings


_NOT_JSON = object()


def _at(document: object, pointer: str) -> object:
    try:
        return resolve(document, pointer)
    except KeyError:  # the only way `resolve` says a member is not there
        return MISSING


def _json_document(value: object) -> object:
    """The JSON document base64 `value` holds, its objects as `_Members` (order kept)."""
    if not isinstance(value, str):
        return _NOT_JSON
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
        return json.loads(text, object_pairs_hook=_Members, parse_int=float, parse_float=float)
    except (binascii.Error, ValueError, RecursionError):
        return _NOT_JSON


class _Members(list):
    """A parsed JSON object: its (name, value) pairs in document order."""


def _same_json(left: object, right: object, ordered: bool) -> bool:
    """JSON equality of two parsed documents, numbers as doubles; object members in any order
    unless `ordered`."""
    if isinstance(left, _Members) or isinstance(right, _Members):
        if not (isinstance(left, _Members) and isinstance(right, _Members)):
            return False
        if len(left) != len(right):
            return False
        if not ordered:
            left, right = sorted(left, key=_name), sorted(right, key=_name)
        return all(
            a[0] == b[0] and _same_json(a[1], b[1], ordered)
            for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _same_json(a, b, ordered) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    return type(left) is type(right) and left == right


def _name(pair: tuple[str, object]) -> str:
    return pair[0]


# ----------------------------------------------------------------------------- derive


def check_derived(derive: Iterable[tuple[str, str]], envelope: dict) -> list[Finding]:
    """For each `pointer -> name`, the actual value must equal the value computed from the frame."""
    findings = []
    for pointer, name in derive:
        try:
            computed = derive_value(name, envelope)
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            findings.append(
                Finding("derive", pointer, f"cannot compute {name} from the frame: {exc}")
            )
            continue
        try:
            actual = resolve(envelope, pointer)
        except KeyError:
            actual = MISSING
        if actual != computed:
            findings.append(
                Finding(
                    "derive",
                    pointer,
                    f"{name}: expected the computed {render(computed)}, got {render(actual)}",
                    expected=computed,
                    actual=actual,
                )
            )
    return findings


def check_same_as(
    same_as: Iterable[tuple[str, int, str]], envelope: dict, earlier: dict[int, dict]
) -> list[Finding]:
    """For each `(pointer, step, earlier pointer)`: the value here equals the value at `earlier
    pointer` of the answer step `step` read (`earlier`: step number -> answer), where both are
    present (an absent member is optional metadata the SDK did not give)."""
    findings = []
    for pointer, number, other in same_as:
        try:
            actual = resolve(envelope, pointer)
            wanted = resolve(earlier[number], other)
        except KeyError:
            continue
        if actual != wanted:
            findings.append(
                Finding(
                    "derive",
                    pointer,
                    f"expected the same value as {other} of the answer read in step {number}, "
                    f"{render(wanted)}, got {render(actual)}",
                    expected=wanted,
                    actual=actual,
                )
            )
    return findings


def derive_value(name: str, envelope: dict) -> object:
    """Compute a derived value with the protocol model (docs/fixtures.md `derive`)."""
    from fakepeer.protocol import manifest

    body = envelope["body"]
    if name == "unversioned_group":
        return manifest.unversioned_group(
            body["contract"], body["functions"], body["manifest_hash"]
        )
    if name == "manifest_hash":
        contents = body["contents"]
        if not isinstance(contents, str):
            raise TypeError("contents is not a base64 string")
        return manifest.manifest_hash(base64.b64decode(contents, validate=True))
    raise ValueError(f"unknown derived value {name!r}")
