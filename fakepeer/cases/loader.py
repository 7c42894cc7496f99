"""Loading fixture files: schema check, semantic checks, macro expansion, exchange ids.

`load_fixtures` is shared by `ryusen-conform run` and `ryusen-conform fixtures validate`, so a
fixture that validates is a fixture that runs.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from fakepeer.cases import cache
from fakepeer.cases.conformity import message_problems, same_as_problems
from fakepeer.cases.errors import FixtureError, FixtureProblem
from fakepeer.cases.exchanges import ExchangeCounter
from fakepeer.cases.lifecycle import is_lifecycle, lifecycle_fixture
from fakepeer.cases.macros import MacroError, expand, first_macro
from fakepeer.cases.model import (
    KEPT_FRAME_BYTES,
    ExpectedTrace,
    ExpectStep,
    Fixture,
    RawSendStep,
    SendStep,
    Step,
)
from fakepeer.cases.root import active_root
from fakepeer.cases.schema import schema_problems
from fakepeer.protocol import strictjson
from fakepeer.protocol.encode import encode_envelope
from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.protocol.pointer import join
from fakepeer.protocol.version import BASE_VERSION
from fakepeer.transport.payload import HttpPayload, parse_fault

DEFAULT_VERSION = BASE_VERSION


def repository_root() -> Path:
    """The root this invocation works on (fakepeer.cases.root): a checkout or the bundled corpus."""
    return active_root().path


def default_fixture_dir() -> Path:
    return active_root().fixtures


def fixture_files(paths: Iterable[Path | str]) -> list[Path]:
    """Every `*.json` file named directly or found (recursively) under a named folder, sorted."""
    files: set[Path] = set()
    for path in map(Path, paths):
        if path.is_dir():
            files.update(p for p in path.rglob("*.json") if p.is_file())
        elif path.is_file():
            files.add(path)
        else:
            raise FixtureError([FixtureProblem(path, "", "no such file or folder")])
    return sorted(files, key=str)  # str: Path ordering costs ms per thousand files


def load_fixtures(
    paths: Iterable[Path | str] | None = None, only: Callable[[Path], bool] | None = None
) -> list[Fixture]:
    """Load and check every fixture under `paths` (default: the repository's fixtures/ folder).

    `only` picks files by path before they are read (`run -k ONE` checks one file, not the
    corpus: a fixture's id is its file's stem and its category its folder's name, which the
    load checks). Returns the fixtures sorted by id. Raises FixtureError listing every problem
    in every file it read.
    """
    files = fixture_files([default_fixture_dir()] if paths is None else paths)
    if only is not None:
        files = [file for file in files if only(file)]
    folder = cache.cache_dir()
    fixtures: list[Fixture] = []
    problems: list[FixtureProblem] = []
    first_seen: dict[str, Path] = {}
    real_folders: dict[str, str] = {}
    for file in files:
        try:
            fixture = _load_cached(file, folder, real_folders)
        except FixtureError as exc:
            problems.extend(exc.problems)
            continue
        if fixture.id in first_seen:
            problems.append(
                FixtureProblem(
                    file, "/id", f"id {fixture.id!r} is also used by {first_seen[fixture.id]}"
                )
            )
            continue
        first_seen[fixture.id] = file
        fixtures.append(fixture)
    if problems:
        raise FixtureError(problems)
    return sorted(fixtures, key=lambda fixture: fixture.id)


def _load_cached(file: Path, folder: Path | None, real_folders: dict[str, str]) -> Fixture:
    """`load_fixture_file`, answered from the cache of checked fixtures when the file's bytes
    (and the checking code) are unchanged (fakepeer.cases.cache)."""
    if folder is None:
        return load_fixture_file(file)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise FixtureError([FixtureProblem(file, "", f"cannot read: {exc}")]) from None
    key = cache.key_of(file, data, real_folders)
    fixture = cache.get(folder, key)
    if fixture is None:
        fixture = load_fixture_file(file, data)
        cache.put(folder, key, fixture)
    return fixture


def load_fixture_file(file: Path, data: bytes | None = None) -> Fixture:
    """Read one fixture file, named `<id>.json` inside a folder named after its category
    (`data`: its bytes, when the caller has read them already)."""
    try:
        text = (file.read_bytes() if data is None else data).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FixtureError([FixtureProblem(file, "", f"cannot read: {exc}")]) from None
    try:  # strict: a repeated key, NaN, 1e400 or nesting past the limit is a fixture error
        document = strictjson.loads(text)
    except strictjson.StrictJsonError as exc:
        problem = FixtureProblem(file, exc.pointer or "", f"not valid JSON: {exc.message}")
        raise FixtureError([problem]) from None
    except ValueError as exc:
        raise FixtureError([FixtureProblem(file, "", f"not valid JSON: {exc}")]) from None
    leftovers = scaffold_leftovers(document, file)
    if leftovers:  # an unfilled `fixtures new` skeleton would run (and pass) as if it checked
        raise FixtureError(leftovers)
    fixture = fixture_from_document(document, file)
    problems = message_problems(fixture, file)
    if file.stem != fixture.id:
        problems.append(FixtureProblem(file, "/id", f"the file must be named {fixture.id}.json"))
    if file.parent.name != fixture.category:
        problems.append(
            FixtureProblem(
                file,
                "/category",
                f"{fixture.category!r} fixtures live in a folder named "
                f"{fixture.category!r}, not {file.parent.name!r}",
            )
        )
    if problems:
        raise FixtureError(problems)
    if fixture.lifecycle is None:  # keep the bytes, not the built steps (Fixture.source)
        fixture = fixture.compact(
            data if data is not None else text.encode("utf-8"), steps_from_source
        )
    return fixture


#: Recorded drafts (`fixtures record`) sit beside fixtures until a person reviews them.
RECORDED_SUFFIX = ".recorded.json"


def scaffold_leftovers(document: object, file: Path | None) -> list[FixtureProblem]:
    """The prose `fixtures new` fills with `TODO` (title, notes, the rule's members), unedited."""
    if not isinstance(document, dict):
        return []
    found = [(f"/{key}", document.get(key)) for key in ("title", "notes")]
    rule = document.get("rule")
    if isinstance(rule, dict):
        found += [(f"/rule/{key}", rule.get(key)) for key in ("section", "quote", "protocol")]
    return [
        FixtureProblem(
            file,
            pointer,
            f"still the scaffold's text ({text[:60]!r}): fill it in (fixtures new), then "
            "ryusen-conform fixtures validate",
        )
        for pointer, text in found
        if isinstance(text, str) and "TODO" in text
    ]


def fixture_from_document(document: object, file: Path | None = None) -> Fixture:
    """Check one fixture document against the schema and build the runnable Fixture."""
    if is_lifecycle(document):
        return lifecycle_fixture(document, file)  # type: ignore[arg-type]
    problems = schema_problems(document, file)
    if problems:
        raise FixtureError(problems)
    assert isinstance(document, dict)
    steps = build_steps(document, file)
    version = document.get("protocol_version", DEFAULT_VERSION)
    return Fixture.from_document(document, file, steps, protocol_version=version)


def checked(fixture: Fixture) -> Fixture:
    """`fixture` (its steps held, as the scenario API builds them) with its expects marked
    checked when its messages pass their checks, as loading a file checks them
    (`ExpectStep.checked`); unchanged otherwise."""
    if fixture.held_steps is None or message_problems(fixture):
        return fixture
    steps = tuple(
        dataclasses.replace(step, checked=True)
        if isinstance(step, ExpectStep) and not step.vary and not step.derive
        else step
        for step in fixture.held_steps
    )
    return dataclasses.replace(fixture, held_steps=steps)


def build_steps(
    document: dict, file: Path | None = None, *, checked: bool = False
) -> tuple[Step, ...]:
    """The runnable steps of a schema-checked fixture document (macros expanded, exchange ids
    assigned, frames encoded); FixtureError for a step the schema cannot refuse. `checked`:
    the document's messages passed their checks too (`ExpectStep.checked`)."""
    counter = ExchangeCounter(document["id"])
    version = document.get("protocol_version", DEFAULT_VERSION)
    steps: list[Step] = []
    nonces: dict[str, str] = {}  # the nonces this build chose, by label (HTTP faults)
    for index, raw_step in enumerate(document["steps"]):
        try:
            steps.append(_build_step(raw_step, ("steps", index), counter, version, checked, nonces))
        except MacroError as exc:
            raise FixtureError([FixtureProblem(file, exc.pointer, exc.message)]) from None
        except _StepProblem as exc:
            raise FixtureError([FixtureProblem(file, exc.pointer, exc.message)]) from None
    problems = _misplaced_traces(steps, file) + same_as_problems(steps, file)
    if problems:
        raise FixtureError(problems)
    if not any(isinstance(step, ExpectStep) for step in steps):
        problems.append(FixtureProblem(file, "/steps", "a fixture has at least one expect step"))
        raise FixtureError(problems)
    return tuple(steps)


def steps_from_source(data: bytes, file: Path | None = None) -> tuple[Step, ...]:
    """The steps of a fixture file's bytes that loaded cleanly before (`Fixture.source`): built
    again the same way, without the checks it passed then."""
    return build_steps(strictjson.loads(data.decode("utf-8")), file, checked=True)


def _misplaced_traces(steps: list[Step], file: Path | None) -> list[FixtureProblem]:
    """A `trace` belongs on the expect that answers an `invoke` (the trace is of that pass); one
    asked `after_reset` holds no event and answers a discovery (a targeted answer's invariants
    need the target's start in the trace, which the reset cleared)."""
    modes = {
        s.exchange_id: s.envelope["body"].get("mode")
        if isinstance(s.envelope["body"], dict)
        else None
        for s in steps
        if isinstance(s, SendStep) and s.envelope["kind"] == "invoke"
    }
    problems = []
    for index, step in enumerate(steps):
        if not isinstance(step, ExpectStep) or step.trace is None:
            continue
        pointer = f"/steps/{index}/trace"
        if step.exchange_id not in modes:
            problems.append(
                FixtureProblem(file, pointer, "a trace belongs on the answer to an invoke")
            )
        elif step.trace.after_reset and step.trace.events:
            problems.append(
                FixtureProblem(
                    file,
                    f"{pointer}/events",
                    "a trace asked after_reset holds nothing: conform.reset clears the trace "
                    "(docs/host-contract.md §12.4), so events must be []",
                )
            )
        elif step.trace.after_reset and modes[step.exchange_id] != "discover":
            problems.append(
                FixtureProblem(
                    file,
                    f"{pointer}/after_reset",
                    "after_reset goes on the answer to a discover invoke: a targeted answer's "
                    "invariants need the target's start in the trace, which the reset clears",
                )
            )
    return problems


class _StepProblem(Exception):
    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = pointer
        self.message = message


def _build_step(
    raw: dict,
    path: tuple,
    counter: ExchangeCounter,
    version: str = DEFAULT_VERSION,
    checked: bool = False,
    nonces: dict[str, str] | None = None,
) -> Step:
    step = _plain_step(raw, path, counter, version, checked)
    if "http" in raw and isinstance(step, SendStep | RawSendStep):  # an HTTP fault (D-HTTP-*)
        try:
            fault = parse_fault(raw["http"], nonces)
        except ValueError as exc:
            raise _StepProblem(join((*path, "http")), str(exc)) from None
        payload = HttpPayload(step.payload, fault)  # kept whatever its size
        if isinstance(step, SendStep):
            step = dataclasses.replace(step, prepared=payload)
        else:
            step = dataclasses.replace(step, payload=payload)
    return step


def _plain_step(
    raw: dict, path: tuple, counter: ExchangeCounter, version: str, checked: bool
) -> Step:
    if "send" in raw:
        send = raw["send"]
        kind = send["kind"]
        envelope_id = counter.for_send(kind, send.get("id"))
        body = expand(send["body"], (*path, "send", "body"))
        extra = expand(send.get("extra", {}), (*path, "send", "extra"))
        envelope = {
            "version": send.get("version", version),
            "kind": kind,
            "id": envelope_id,
        }
        envelope["body"] = body
        for key, value in extra.items():
            envelope.setdefault(key, value)
        payload = encode_envelope(envelope)
        _check_frame_size(payload, path)
        prepared = payload if len(payload) <= KEPT_FRAME_BYTES else None
        return SendStep(envelope=envelope, prepared=prepared, exchange_id=envelope_id)
    if "send_raw" in raw:
        try:
            payload = raw["send_raw"].encode("utf-8")
        except UnicodeEncodeError:
            raise _StepProblem(
                join((*path, "send_raw")),
                "the text has a lone surrogate, so it has no UTF-8; use send_raw_base64",
            ) from None
        _check_frame_size(payload, path)
        _refuse_macros_in_raw(raw["send_raw"], path)
        return RawSendStep(payload=payload, exchange_id=counter.for_raw(payload))
    if "send_raw_base64" in raw:
        try:
            payload = base64.b64decode(raw["send_raw_base64"], validate=True)
        except binascii.Error as exc:
            raise _StepProblem(join((*path, "send_raw_base64")), f"not base64: {exc}") from None
        _check_frame_size(payload, path)
        return RawSendStep(payload=payload, exchange_id=counter.for_raw(payload))
    expect = raw["expect"]
    body = expand(expect["body"], (*path, "expect", "body"))
    derive = tuple(raw.get("derive", {}).items())
    trace = None
    if "trace" in raw:
        events = expand(raw["trace"]["events"], (*path, "trace", "events"))
        trace = ExpectedTrace(
            tuple(events),  # type: ignore[arg-type]
            raw["trace"].get("match", "exact"),
            tuple(raw["trace"].get("only", ())),
            raw["trace"].get("after_reset", False),
        )
    return ExpectStep(
        kind=expect["kind"],
        body=body,  # type: ignore[arg-type]
        exchange_id=counter.for_expect(),
        vary=tuple(raw.get("vary", ())),
        derive=derive,
        same_as=tuple(
            (pointer, ref["step"], ref["pointer"])
            for pointer, ref in raw.get("same_as", {}).items()
        ),
        recommend=tuple(raw.get("recommend", {}).items()),
        match=tuple(raw.get("match", {}).items()),
        trace=trace,
        checked=checked and not raw.get("vary") and not derive,
    )


def _check_frame_size(payload: bytes, path: tuple) -> None:
    """A sent frame must fit a frame (§1): otherwise the run would blame the SDK for it."""
    if len(payload) > MAX_FRAME_BYTES:
        raise _StepProblem(
            join(path),
            f"the frame sent here is {len(payload)} bytes; a frame holds at most "
            f"{MAX_FRAME_BYTES} bytes (docs/protocol.md §1)",
        )


def refuse_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """`object_pairs_hook` that refuses a repeated member instead of keeping the last one."""
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the member {key!r} appears twice in one object")
        result[key] = value
    return result


def _refuse_macros_in_raw(text: str, path: tuple) -> None:
    """`send_raw` goes out as written, so a macro in it is an authoring slip (never expanded)."""
    try:
        document = strictjson.loads(text)
    except ValueError:
        return  # deliberately not JSON
    found = first_macro(document)
    if found is not None:
        pointer, name = found
        raise _StepProblem(
            join((*path, "send_raw")),
            f"the frame holds the macro {name} at {pointer or '(root)'}, which send_raw never"
            " expands: write the tagged value (or use send), or send_raw_base64 to send it as is",
        )
