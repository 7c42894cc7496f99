"""`fixtures validate`: the loader's checks plus the semantic rules of docs/fixtures.md.

The loader (shared with `run`) checks the schema, file naming, unique ids and macros; this module
adds what only an author needs told: the quote really is RFD 2, the § exists, the kinds go the
right way, the capabilities exist. Problems name the file, a JSON pointer and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fakepeer.authoring.docs import (
    MIN_CLAUSE_WORDS,
    Rfd,
    decision_ids,
    decision_versions,
    load_rfd,
    protocol_sections,
    section_refs,
)
from fakepeer.authoring.kinds import (
    CAPABILITIES_1_0,
    EXPECT_KINDS,
    SEND_KINDS,
    TRANSPORT_CAPABILITIES,
)
from fakepeer.authoring.oracle_check import OracleCheck, check_fixture
from fakepeer.cases import (
    FixtureError,
    FixtureProblem,
    default_fixture_dir,
    fixture_files,
    load_fixture_file,
)
from fakepeer.cases.loader import RECORDED_SUFFIX  # noqa: E402, F401 - record.py reads it here
from fakepeer.protocol import strictjson
from fakepeer.protocol.pointer import escape


def validate_paths(
    paths: Iterable[Path | str], oracle: OracleCheck | None = None
) -> tuple[int, list[FixtureProblem]]:
    """Check every fixture file under `paths`; return (files checked, problems).

    The oracle (fakepeer/oracle) recomputes every invoke it models; its disagreements are
    problems too, and `oracle`, when given, receives its counts.
    """
    oracle = oracle if oracle is not None else OracleCheck()
    try:
        files = fixture_files(paths)
    except FixtureError as exc:
        return 0, exc.problems
    rfd = load_rfd()
    sections = protocol_sections()
    problems: list[FixtureProblem] = []
    first_seen: dict[str, Path] = corpus_ids(files)
    for file in files:
        if file.name.endswith(RECORDED_SUFFIX):
            problems.append(
                FixtureProblem(
                    file,
                    "",
                    "a recorded draft is not a fixture: review every expect, then save it as "
                    "<id>.json (and delete the .recorded.json file)",
                )
            )
            continue
        try:
            fixture = load_fixture_file(file)
        except FixtureError as exc:
            problems.extend(exc.problems)
        else:
            check_fixture(fixture, oracle)
            if fixture.id in first_seen:
                problems.append(
                    FixtureProblem(
                        file, "/id", f"id {fixture.id!r} is also used by {first_seen[fixture.id]}"
                    )
                )
            else:
                first_seen[fixture.id] = file
        document = _read(file)
        if isinstance(document, dict):
            problems.extend(semantic_problems(document, file, rfd, sections))
    problems.extend(oracle.problems)
    return len(files), _unique(problems)


def corpus_ids(checked: list[Path]) -> dict[str, Path]:
    """The ids of the repository's fixtures that are not among `checked` (id -> file).

    `run` loads the corpus together with `--fixtures`, so a new fixture whose id the corpus
    already uses is refused there: validate refuses it too. Ids are file names (`<id>.json`).
    """
    corpus = default_fixture_dir()
    if not corpus.is_dir():
        return {}
    own = {file.resolve() for file in checked}
    return {
        file.stem: file
        for file in sorted(corpus.rglob("*.json"))
        if file.resolve() not in own and not file.name.endswith(RECORDED_SUFFIX)
    }


def _read(file: Path) -> object:
    try:
        return strictjson.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # the loader has already reported it


def semantic_problems(
    document: dict, file: Path | None, rfd: Rfd, sections: frozenset[str]
) -> list[FixtureProblem]:
    """Rules the schema cannot express; tolerant of shape errors the schema reports."""
    problems: list[FixtureProblem] = []

    def problem(pointer: str, message: str) -> None:
        problems.append(FixtureProblem(file, pointer, message))

    rule = document.get("rule")
    if isinstance(rule, dict):
        quote = rule.get("quote")
        if isinstance(quote, str) and not rfd.contains(quote):
            problem(
                "/rule/quote",
                "expected an exact quote of docs/rfd-2-execution-protocol.txt "
                "(whitespace-insensitive); this text does not occur in it" + quote_hint(quote, rfd),
            )
        elif isinstance(quote, str) and not rfd.is_full_clause(quote):
            problem(
                "/rule/quote",
                "expected a full clause of RFD 2: one or more whole sentences, or at least "
                f"{MIN_CLAUSE_WORDS} words running from a sentence start or a ; : — mark to a "
                "sentence end or such a mark (docs/fixtures.md); quote the whole sentence",
            )
        decision = rule.get("decision")
        if isinstance(decision, str) and decision not in decision_ids():
            problem(
                "/rule/decision",
                f"expected a decision id defined in docs/decisions.md (a '## {decision}' "
                f"heading), got {decision!r}",
            )
        problems.extend(_decision_version_problems(document, decision, file))
        if decision is None:
            problems.extend(_unnamed_decision_problems(document, rule, file))
        reference = rule.get("protocol")
        if isinstance(reference, str):
            refs = section_refs(reference)
            if not refs:
                problem(
                    "/rule/protocol",
                    f"expected a protocol section like §7.2 (docs/protocol.md or "
                    f"docs/host-contract.md), got {reference!r}",
                )
            for ref in refs:
                if ref not in sections:
                    problem(
                        "/rule/protocol",
                        f"neither docs/protocol.md nor docs/host-contract.md has a section §{ref}",
                    )
    version = document.get("protocol_version")
    if isinstance(version, str):
        problem_text = _version_problem(version)
        if problem_text:
            problem("/protocol_version", problem_text)
    capabilities = document.get("capabilities")
    if isinstance(capabilities, list):
        for index, name in enumerate(capabilities):
            if isinstance(name, str) and name not in CAPABILITIES_1_0 | TRANSPORT_CAPABILITIES:
                known = ", ".join(sorted(CAPABILITIES_1_0))
                transport = ", ".join(sorted(TRANSPORT_CAPABILITIES))
                problem(
                    f"/capabilities/{index}",
                    f"expected a §7.3 capability ({known}) or a transport capability "
                    f"({transport}), got {name!r}",
                )
    steps = document.get("steps")
    uses_http = isinstance(steps, list) and any(isinstance(s, dict) and "http" in s for s in steps)
    if uses_http and not (isinstance(capabilities, list) and "http" in capabilities):
        problem("/capabilities", "a step has an `http` fault: the fixture needs capability `http`")
    if isinstance(steps, list):
        for index, step in enumerate(steps):
            if isinstance(step, dict):
                problems.extend(_step_problems(step, f"/steps/{index}", file))
                problems.extend(
                    _recommend_problems(step, f"/steps/{index}", document.get("level"), file)
                )
        if isinstance(capabilities, list):
            problems.extend(_uncovered_capabilities(steps, capabilities, file))
    return problems


#: The §7.3 capability a conform.program op needs (docs/host-contract.md), and an answer's
#: declaration type: a fixture that uses one without listing it runs on an SDK that does not
#: offer it and fails there, where it should be skipped with the reason.
OP_CAPABILITIES = {
    "invoke": "child_invocations",
    "sleep": "timers",
    "sleep_until": "timers",
    "wait": "event_waits",
    "emit": "event_emission",
    "json_bytes": "json_convenience",
}
DECLARATION_CAPABILITIES = {
    "invoke": "child_invocations",
    "timer": "timers",
    "wait": "event_waits",
    "emit": "event_emission",
}


def _uncovered_capabilities(
    steps: list, capabilities: list, file: Path | None
) -> list[FixtureProblem]:
    """Each capability the fixture's program ops or expected declarations need and do not list
    (the first place that needs it is named)."""
    needed: dict[str, str] = {}
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        send, expect = step.get("send"), step.get("expect")
        if isinstance(send, dict) and send.get("kind") == "invoke":
            body = send.get("body")
            program = body.get("input") if isinstance(body, dict) else None
            if isinstance(program, dict) and "$plain" in program:
                program = program["$plain"]
            for op in _program_ops(program):
                capability = OP_CAPABILITIES.get(op.get("op"))  # type: ignore[arg-type]
                if op.get("op") == "run" and op.get("compensate") not in (None, False):
                    capability = "compensation"
                if capability:
                    where = f"/steps/{index}/send: op {op.get('op')!r}"
                    needed.setdefault(capability, where)
        if isinstance(expect, dict) and isinstance(expect.get("body"), dict):
            declaration = expect["body"].get("declaration")
            kind = declaration.get("type") if isinstance(declaration, dict) else None
            capability = DECLARATION_CAPABILITIES.get(kind)  # type: ignore[arg-type]
            if capability:
                needed.setdefault(capability, f"/steps/{index}/expect: a {kind!r} declaration")
    listed = {name for name in capabilities if isinstance(name, str)}
    return [
        FixtureProblem(
            file,
            "/capabilities",
            f"{where} needs capability {capability!r}; list it, so an SDK without it has the "
            "case skipped, not failed (docs/protocol.md §7.3)",
        )
        for capability, where in sorted(needed.items())
        if capability not in listed
    ]


def _program_ops(program: object) -> list[dict]:
    """Every op of a conform.program input, nested ones (`then`, `else`, `ops`) included."""
    found: list[dict] = []
    pending = [program.get("ops")] if isinstance(program, dict) else []
    while pending:
        ops = pending.pop()
        if not isinstance(ops, list):
            continue
        for op in ops:
            if isinstance(op, dict):
                found.append(op)
                pending.extend(op.get(key) for key in ("then", "else", "ops"))
    return found


#: Characters typed in place of RFD 2's typography, and what RFD 2 uses.
_TYPOGRAPHY = {"'": "’‘", '"': "“”", "-": "–—", "...": "…"}


def _plain(text: str) -> str:
    for plain, fancy in _TYPOGRAPHY.items():
        for char in fancy:
            text = text.replace(char, plain)
    return text


def quote_hint(quote: str, rfd: Rfd) -> str:
    """Why a quote was not found: typographic quotes or dashes, else the closest RFD 2 text."""
    import difflib

    from fakepeer.authoring.docs import normalise

    needle = normalise(quote)
    plain_text = _plain(rfd.text)
    at = plain_text.find(_plain(needle))
    if at != -1 and len(plain_text) == len(rfd.text):
        original = rfd.text[at : at + len(needle)]
        swaps = sorted(
            {
                f"{b!r} where the quote has {a!r}"
                for a, b in zip(needle, original, strict=True)
                if a != b
            }
        )
        return (
            "; RFD 2 uses typographic characters here: "
            + ", ".join(swaps)
            + f"; copy it exactly: {original!r}"
        )
    score, closest = 0.0, ""
    for sentence in rfd.sentences:  # how much of the quote each sentence contains, in order
        matcher = difflib.SequenceMatcher(None, sentence.text, needle, autojunk=False)
        blocks = matcher.get_matching_blocks()
        found = sum(block.size for block in blocks if block.size >= 4) / len(needle)
        if found > score:
            score, closest = found, sentence.text
    return f"; the closest RFD 2 sentence is: {closest!r}" if score >= 0.8 else ""


#: Answers only a decision fixes, recognisable in an expectation: (what to look for in the
#: expects' JSON text, the decision that settles it, a phrase the quote would hold if RFD 2
#: itself demanded the answer). docs/fixtures.md: such a fixture names its `rule.decision`.
_DECIDED = (
    ('"app.unhandled"', "D-APP-UNHANDLED", "app.unhandled"),
    ('"kind": "target_not_found"', "D-TARGET-NOT-REACHED", "target_not_found"),
    ('"max_attempts": 3, "backoff_ms": "1000"', "D-DEFAULT-RETRY", "three attempts"),
)


def _unnamed_decision_problems(document: dict, rule: dict, file: Path | None) -> list:
    """An expectation that uses a category or shape a decision settles names that decision
    (checkable cases only: the category app.unhandled, target_not_found where the quote does
    not say it, the default retry)."""
    import json

    steps = document.get("steps")
    if not isinstance(steps, list):
        return []
    expects = json.dumps([s.get("expect") for s in steps if isinstance(s, dict)])
    quote = rule.get("quote") if isinstance(rule.get("quote"), str) else ""
    return [
        FixtureProblem(
            file,
            "/rule/decision",
            f"the expectation uses what {decision} settles ({marker}), and the quote does not "
            f'demand it: name the decision ("decision": "{decision}", docs/fixtures.md)',
        )
        for marker, decision, phrase in _DECIDED
        if marker in expects and phrase not in quote
    ]


def _decision_version_problems(
    document: dict, decision: object, file: Path | None
) -> list[FixtureProblem]:
    """A fixture resting on a decision protocol 1.1 added needs 1.1: an SDK that negotiated 1.0
    gets it skipped, never failed (docs/fixtures.md "Protocol versions").

    Except the HTTP mapping's own fixtures (capability `http`, a D-HTTP-* decision): the
    transport is gated by the transport, not by the envelope's minor, so a host serving HTTP
    at 1.0 runs them all, authentication included; they carry no `protocol_version`.
    """
    from fakepeer.protocol.version import BASE_VERSION, parse_version

    since = decision_versions().get(decision) if isinstance(decision, str) else None
    version = document.get("protocol_version", BASE_VERSION)
    if since is None or not isinstance(version, str):
        return []
    if _of_the_http_mapping(document, decision):
        if version == BASE_VERSION:
            return []
        return [
            FixtureProblem(
                file,
                "/protocol_version",
                f"the fixture rests on {decision}, a decision of the HTTP transport: its fixtures "
                "run at every protocol version a host serving HTTP negotiates, so it carries no "
                'protocol_version (docs/fixtures.md "Protocol versions")',
            )
        ]
    try:
        if parse_version(version) >= parse_version(since):
            return []
    except ValueError:
        return []  # the version's own problem is reported on its own
    return [
        FixtureProblem(
            file,
            "/protocol_version",
            f"the fixture rests on {decision}, which protocol {since} added "
            f'(docs/decisions.md): give it "protocol_version": "{since}"',
        )
    ]


def _of_the_http_mapping(document: dict, decision: object) -> bool:
    """A fixture of the HTTP transport itself: it needs capability `http` and rests on D-HTTP-*."""
    capabilities = document.get("capabilities")
    return (
        isinstance(decision, str)
        and decision.startswith("D-HTTP-")
        and isinstance(capabilities, list)
        and "http" in capabilities
    )


def _version_problem(version: str) -> str | None:
    """A fixture may need any minor up to the one the bench speaks, never another major."""
    from fakepeer.protocol.version import PROTOCOL_VERSION, parse_version

    try:
        needed = parse_version(version)
    except ValueError as exc:
        return str(exc)
    if needed[0] != parse_version(PROTOCOL_VERSION)[0] or needed > parse_version(PROTOCOL_VERSION):
        return (
            f"expected a version the bench speaks (up to {PROTOCOL_VERSION}, "
            f"fakepeer/protocol/version.py PROTOCOL_VERSION), got {version!r}"
        )
    return None


def _recommend_problems(
    step: dict, pointer: str, level: object, file: Path | None
) -> list[FixtureProblem]:
    """A `recommend` part names a decision of docs/decisions.md, is no `vary` pointer too (a
    varied member is never compared), and sits in a `required` fixture (in a recommended one
    every part is recommended already)."""
    recommend = step.get("recommend")
    if not isinstance(recommend, dict):
        return []
    problems = []
    if level == "recommended":
        problems.append(
            FixtureProblem(
                file,
                f"{pointer}/recommend",
                "the fixture is `recommended` as a whole, so every part is; a `recommend` part "
                'belongs in a `required` fixture (docs/fixtures.md "Levels inside a fixture")',
            )
        )
    varied = set(step.get("vary") or ()) if isinstance(step.get("vary"), list) else set()
    for part, decision in recommend.items():
        where = f"{pointer}/recommend/{part.replace('~', '~0').replace('/', '~1')}"
        if isinstance(decision, str) and decision not in decision_ids():
            problems.append(
                FixtureProblem(
                    file,
                    where,
                    f"expected a decision id defined in docs/decisions.md (a '## {decision}' "
                    f"heading), got {decision!r}",
                )
            )
        if part in varied:
            problems.append(
                FixtureProblem(
                    file,
                    where,
                    "the part is in `vary` too, so it is never compared: list it in one of them",
                )
            )
    return problems


def _step_problems(step: dict, pointer: str, file: Path | None) -> list[FixtureProblem]:
    problems = []
    send, expect = step.get("send"), step.get("expect")
    for member, part in (("send", send), ("expect", expect)):
        if isinstance(part, dict):
            for where in (
                *_near_macros(part.get("body"), f"{pointer}/{member}/body"),
                *_near_macros(part.get("extra"), f"{pointer}/{member}/extra"),
            ):
                problems.append(
                    FixtureProblem(
                        file,
                        where,
                        "a member starting with $ makes a macro only when it is the object's "
                        "only member; this object has others, so it would be sent literally",
                    )
                )
    if isinstance(send, dict) and isinstance(send.get("kind"), str):
        if send["kind"] not in SEND_KINDS:
            problems.append(
                FixtureProblem(
                    file,
                    f"{pointer}/send/kind",
                    f"expected a bench-to-host kind ({', '.join(sorted(SEND_KINDS))}), got "
                    f"{send['kind']!r}; send an unknown kind on purpose with send_raw",
                )
            )
    if isinstance(expect, dict) and isinstance(expect.get("kind"), str):
        if expect["kind"] not in EXPECT_KINDS:
            problems.append(
                FixtureProblem(
                    file,
                    f"{pointer}/expect/kind",
                    f"expected a host-to-bench kind ({', '.join(sorted(EXPECT_KINDS))}), got "
                    f"{expect['kind']!r}",
                )
            )
    return problems


def _near_macros(node: object, pointer: str) -> list[str]:
    """Pointers of objects that mix a `$name` member with other members."""
    found = []
    if isinstance(node, dict):
        if len(node) > 1 and any(str(key).startswith("$") for key in node):
            found.append(pointer)
        for key, value in node.items():
            found.extend(_near_macros(value, f"{pointer}/{_escape(str(key))}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_near_macros(value, f"{pointer}/{index}"))
    return found


_escape = escape


def _unique(problems: list[FixtureProblem]) -> list[FixtureProblem]:
    seen: set[tuple[str, str, str]] = set()
    result = []
    for problem in problems:
        key = (str(problem.file), problem.pointer, problem.message)
        if key not in seen:
            seen.add(key)
            result.append(problem)
    return result
