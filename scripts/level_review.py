#!/usr/bin/env python3
"""List every fixture with its level, decision and quote, and flag levels off the stated rule.

Why: docs/fixtures.md ("Levels") says when a fixture is `required` and when `recommended`, and
that a fixture whose quote does not itself demand its expectation names its `rule.decision`.
Reviewing a corpus of hundreds of fixtures by hand needs them side by side, category by
category, with what a machine can check pointed out:

- `recommended` without a decision (recommended means RFD 2 alone does not settle it, so some
  decision must be what the fixture rests on);
- a level that disagrees with its decision's own entry in docs/decisions.md, where the entry says
  "the fixtures are `recommended`" or "`required`";
- one decision whose fixtures carry both levels (each such fixture needs a reason in its notes).

- a part the rule of docs/fixtures.md "Levels inside a fixture" makes recommended that the
  fixture still requires (`PARTS` below: a default display name or retry the program does not
  give, the category and pointer of a refusal of a frame a correct server never sends, the
  category of an author's mistake, an `app.unhandled` record's details).

    python scripts/level_review.py [--category NAME] [--flagged] [--decision D-NAME] [--parts]
    python scripts/level_review.py --apply     # write the `recommend` parts the rule names

Prints `id  level  decision  quote…`, grouped by category, flags marked `!`; with `--parts`,
each fixture's required part (its quote or decision) and every recommended part with the
decision and the reason behind it. Exits 0 (it is a review aid; tests/docs/test_level_review.py
holds the corpus to it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_HEADING = re.compile(r"^## (D-[A-Z0-9-]+)\s*$")


def decision_levels(path: Path) -> dict[str, str]:
    """Decision id -> the level its entry says its fixtures have, where it says one."""
    levels: dict[str, str] = {}
    current = None
    text: dict[str, list[str]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _HEADING.match(line)
        if match:
            current = match[1]
        elif line.startswith("## "):
            current = None
        elif current:
            text[current].append(line)
    for ident, lines in text.items():
        body = " ".join(lines)
        said = re.findall(r"fixtures are\s+`(required|recommended)`", body)
        if len(set(said)) == 1:
            levels[ident] = said[0]
    return levels


def load(root: Path) -> list[dict]:
    fixtures = []
    for path in sorted((root / "fixtures").rglob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(document, dict) and "id" in document and "level" in document:
            fixtures.append(document)
    return fixtures


def decisions_of(fixture: dict) -> list[str]:
    decision = (fixture.get("rule") or {}).get("decision") or ""
    return re.findall(r"D-[A-Z0-9-]+", decision)


def flags(fixtures: list[dict], said: dict[str, str]) -> dict[str, list[str]]:
    """Fixture id -> the reasons its level looks off the rule."""
    found: dict[str, list[str]] = defaultdict(list)
    by_decision: dict[str, set[str]] = defaultdict(set)
    for fixture in fixtures:
        for decision in decisions_of(fixture):
            by_decision[decision].add(fixture["level"])
    for fixture in fixtures:
        ident, level, decisions = fixture["id"], fixture["level"], decisions_of(fixture)
        if level == "recommended" and not decisions:
            found[ident].append("recommended without a rule.decision")
        for decision in decisions:
            if decision in said and said[decision] != level:
                found[ident].append(f"{decision} says its fixtures are {said[decision]}")
            if len(by_decision[decision]) > 1:
                found[ident].append(f"{decision} has fixtures of both levels")
    return found


# ----------------------------------------------------------------------------- parts

#: The default retry and the default display name (D-DEFAULT-RETRY).
DEFAULT_RETRY = {"max_attempts": 3, "backoff_ms": "1000"}
#: Refusals of a frame or value a correct server never sends: the category is a recommendation.
REFUSAL_CATEGORIES = frozenset({"protocol.malformed", "protocol.invalid_value"})
#: The answers that carry the SDK's own refusal of a frame (not an error record an application
#: raised, whose category is kept as given whatever it is).
REFUSAL_KINDS = frozenset(
    {"protocol_error", "conform.registration_outcome", "conform.publication_outcome"}
)
#: Categories of an author's mistake (a malformed duration, a declaration the protocol forbids,
#: a non-bytes emit payload): the refusal and its retryability are required, the category not.
AUTHOR_CATEGORIES = frozenset({"sdk.invalid_duration", "sdk.invalid_declaration"})
#: What each recommended part rests on, and why it is recommended (docs/fixtures.md).
WHY = {
    "name": ("D-DEFAULT-RETRY", "the default display name: the program gives none"),
    "retry": ("D-DEFAULT-RETRY", "the default retry: the program gives none"),
    "category": (
        "D-DECODE-ORDER",
        "the category of a refusal of a frame a correct server never sends",
    ),
    "pointer": ("D-POINTERS", "the pointer of a refusal of a frame a correct server never sends"),
    "author": ("D-RESERVED-CATEGORIES", "the category of an author's mistake"),
    "unhandled": ("D-APP-UNHANDLED", "an app.unhandled record's language-specific details"),
    "emitted": (
        "D-EMIT-PAYLOAD",
        "the byte spelling of an emitted JSON document (the document and its member order are "
        "required: `match` json_ordered)",
    ),
    "json": (
        "D-JSON-CONVENIENCE",
        "the JSON convenience's spelling of a document (the document itself is required: `match`)",
    ),
}

#: The required matcher beside a recommended spelling: why -> matcher (docs/fixtures.md `match`).
MATCHERS = {WHY["json"][1]: "json", WHY["emitted"][1]: "json_ordered"}


def _ops(program: object) -> list[dict]:
    """Every op of a conform.program input (nested ops included), as written."""
    found: list[dict] = []
    stack = [program.get("ops")] if isinstance(program, dict) else []
    while stack:
        ops = stack.pop()
        if not isinstance(ops, list):
            continue
        for op in ops:
            if isinstance(op, dict):
                found.append(op)
                stack.extend(op.get(key) for key in ("then", "else", "ops"))
    return found


def _program(send: object) -> object:
    """The ops of a `conform.program` invoke (§13.2) as written; None for any other function."""
    body = send.get("body") if isinstance(send, dict) else None
    if not isinstance(body, dict) or body.get("function_id") != "conform.program":
        return None
    program = body.get("input") if isinstance(body, dict) else None
    return program.get("$plain") if isinstance(program, dict) and "$plain" in program else None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _nodes(node: object, pointer: str) -> Iterator[tuple[str, object]]:
    """Every node of a JSON document with its pointer, parents first."""
    yield pointer, node
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        yield from _nodes(value, f"{pointer}/{_escape(str(key))}")


def _error_records(body: object, pointer: str = "") -> list[tuple[str, dict, bool]]:
    """(pointer, record, tagged) of every error record in an expanded body: plain objects with a
    string `category`, and tagged objects whose `category` member is a tagged str."""
    found = []
    for where, node in _nodes(body, pointer):
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("category"), str) and "retryable" in node:
            found.append((where, node, False))
        members = node.get("v") if node.get("t") == "object" else None
        if isinstance(members, dict):
            category = members.get("category")
            if isinstance(category, dict) and category.get("t") == "str":
                found.append((where, members, True))
    return found


def _category(record: dict, tagged: bool) -> str:
    category = record.get("category")
    return category.get("v", "") if tagged and isinstance(category, dict) else str(category)


def rule_parts(
    document: dict, expanded: list | None = None
) -> dict[int, dict[str, tuple[str, str]]]:
    """Step index -> {pointer: (decision, why)} of the parts the rule makes recommended.

    `expanded`: the built steps (fakepeer.cases) whose `body` is the expectation with macros
    expanded; without it, the document's own bodies are read (no macro inside error records).
    """
    if document.get("level") != "required" or not isinstance(document.get("steps"), list):
        return {}
    found: dict[int, dict[str, tuple[str, str]]] = {}
    program = None
    for index, step in enumerate(document["steps"]):
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("send"), dict) and step["send"].get("kind") == "invoke":
            program = _program(step["send"])
        expect = step.get("expect")
        if not isinstance(expect, dict):
            continue
        body = expanded[index].body if expanded is not None else expect.get("body")
        parts: dict[str, tuple[str, str]] = {}
        if expect.get("kind") == "declared":
            parts.update(_default_parts(body, program))
        error = body.get("error") if isinstance(body, dict) else None
        refusal = expect.get("kind") in REFUSAL_KINDS and isinstance(error, dict)
        if refusal and error.get("category") in REFUSAL_CATEGORIES:
            # a `protocol_error`, or a control answer reporting the SDK's refusal of a
            # malformed server answer (`conform.registration_outcome`)
            parts["/body/error/category"] = WHY["category"]
            if isinstance(error.get("details"), dict) and "pointer" in error["details"]:
                parts["/body/error/details/pointer"] = WHY["pointer"]
        author = AUTHOR_CATEGORIES | ({"sdk.conversion"} if _gives_records(program) else set())
        for pointer, record, tagged in _error_records(body, "/body"):
            category = _category(record, tagged)
            member = "/v" if tagged else ""
            if category in author:
                parts[f"{pointer}{member}/category" + ("/v" if tagged else "")] = WHY["author"]
            if category == "app.unhandled" and "details" in record:
                parts[f"{pointer}{member}/details"] = WHY["unhandled"]
        parts.update(_emitted_document(body, program, step.get("vary") or ()))
        if any(op.get("op") == "json_bytes" for op in _ops(program)):
            for pointer in _json_bytes(body, "/body"):
                parts[pointer] = WHY["json"]
        for event_index, event in enumerate((step.get("trace") or {}).get("events") or ()):
            if isinstance(event, dict) and event.get("category") in author:
                parts[f"/trace/{event_index}/category"] = WHY["author"]
        if parts:
            found[index] = parts
    return found


def _json_bytes(body: object, pointer: str) -> list[str]:
    """Pointers to the text of every tagged `bytes` value holding a JSON document."""
    import base64

    found = []
    for where, node in _nodes(body, pointer):
        if isinstance(node, dict) and node.get("t") == "bytes" and isinstance(node.get("v"), str):
            try:
                json.loads(base64.b64decode(node["v"], validate=True).decode("utf-8"))
            except ValueError:
                continue
            found.append(f"{where}/v")
    return found


def _emitted_document(body: object, program: object, varied: object) -> dict:
    """The payload bytes of an emission whose program op hands the SDK a JSON document (`json`):
    their spelling is recommended, the document with its member order required (D-EMIT-PAYLOAD)."""
    declaration = body.get("declaration") if isinstance(body, dict) else None
    if not isinstance(declaration, dict) or declaration.get("type") != "emit":
        return {}
    step_id = declaration.get("step_id")
    ops = [op for op in _ops(program) if op.get("op") == "emit" and op.get("id") == step_id]
    pointer = "/body/declaration/payload/v"
    if not ops or not all("json" in op for op in ops) or pointer in varied:
        return {}
    return {pointer: WHY["emitted"]}


def _gives_records(program: object) -> bool:
    """Whether the program hands the SDK error records of its own (`fail`, `raise`, a failing
    compensator) and returns no unportable value: an `sdk.conversion` it answers is then the
    refusal of a record the wire cannot carry, an author's mistake (not a value's conversion,
    which RFD 2 names: "is refused with a conversion error")."""
    ops = _ops(program)
    records = any(
        "fail" in op or (op.get("op") == "raise") or isinstance(op.get("compensate"), dict)
        for op in ops
    )
    return records and not any("unportable" in op for op in ops)


def _default_parts(body: object, program: object) -> dict[str, tuple[str, str]]:
    """The default display name and retry of a declared step, where the program gives none."""
    declaration = body.get("declaration") if isinstance(body, dict) else None
    if not isinstance(declaration, dict) or declaration.get("type") != "step":
        return {}
    if program is None:  # a registry function (§13): its code gives every name and retry
        return {}
    step_id = declaration.get("step_id")
    ops = [op for op in _ops(program) if op.get("op") == "run" and op.get("id") == step_id]
    parts = {}
    # an op with that id that gives none (one branch of an `if_ambient` may give one)
    if declaration.get("name") == step_id and not (ops and all("name" in op for op in ops)):
        parts["/body/declaration/name"] = WHY["name"]
    retry = declaration.get("retry")
    if retry == DEFAULT_RETRY and not (ops and all("attempts" in op for op in ops)):
        parts["/body/declaration/retry"] = WHY["retry"]
    return parts


def expanded_steps(path: Path) -> list | None:
    """The built steps of a fixture file (bodies with macros expanded), None if it does not
    load (the loader reports it)."""
    from fakepeer.cases.loader import load_fixture_file

    try:
        fixture = load_fixture_file(path)
    except Exception:  # noqa: BLE001 - `fixtures validate` reports a fixture that does not load
        return None
    return None if fixture.lifecycle is not None else list(fixture.steps)


def part_flags(document: dict, expanded: list | None) -> list[str]:
    """The parts the rule makes recommended that the fixture does not list under `recommend`."""
    missing = []
    for index, parts in rule_parts(document, expanded).items():
        listed = document["steps"][index].get("recommend") or {}
        matched = document["steps"][index].get("match") or {}
        for pointer, (_, why) in parts.items():
            if pointer not in listed:
                missing.append(f"step {index + 1}: {pointer} is required here, but it is {why}")
            elif why in MATCHERS and matched.get(pointer) != MATCHERS[why]:
                missing.append(f"step {index + 1}: {pointer} needs `match` {MATCHERS[why]}")
    return missing


def apply_parts(path: Path) -> int:
    """Write the `recommend` parts the rule names into one fixture file; how many were added."""
    from fakepeer.authoring.formatting import format_document

    document = json.loads(path.read_text(encoding="utf-8"))
    added = 0
    for index, parts in rule_parts(document, expanded_steps(path)).items():
        step = document["steps"][index]
        listed = step.setdefault("recommend", {})
        for pointer, (decision, why) in sorted(parts.items()):
            if pointer not in listed:
                listed[pointer] = decision
                added += 1
            if why in MATCHERS:
                step.setdefault("match", {})[pointer] = MATCHERS[why]
    if added:
        path.write_text(format_document(document), encoding="utf-8")
    return added


def parts_lines(document: dict) -> list[str]:
    """The fixture's required part and each recommended part, with what it rests on."""
    rule = document.get("rule") or {}
    behind = rule.get("decision") or f"RFD 2: \u201c{(rule.get('quote') or '')[:70]}\u201d"
    lines = [f"      required: every other part of the expectation ({behind})"]
    for index, step in enumerate(document.get("steps") or ()):
        for pointer, decision in (step.get("recommend") or {}).items():
            lines.append(f"      recommended: step {index + 1} {pointer} ({decision})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", help="only this category")
    parser.add_argument("--decision", help="only fixtures naming this decision")
    parser.add_argument("--flagged", action="store_true", help="only flagged fixtures")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--parts", action="store_true", help="each fixture's parts and levels")
    parser.add_argument("--apply", action="store_true", help="write the rule's recommend parts")
    args = parser.parse_args(argv)
    if args.apply:
        paths = sorted((args.root / "fixtures").rglob("*.json"))
        added = {path.stem: apply_parts(path) for path in paths}
        changed = {ident: count for ident, count in added.items() if count}
        print(f"{sum(changed.values())} part(s) made recommended in {len(changed)} fixture(s)")
        for ident, count in sorted(changed.items()):
            print(f"  {ident}: {count}")
        return 0
    fixtures = load(args.root)
    found = flags(fixtures, decision_levels(args.root / "docs" / "decisions.md"))
    for fixture in fixtures:
        path = args.root / "fixtures" / fixture.get("category", "?") / f"{fixture['id']}.json"
        missing = part_flags(fixture, expanded_steps(path) if path.exists() else None)
        if missing:
            found[fixture["id"]].extend(missing)
    shown = 0
    categories: dict[str, list[dict]] = defaultdict(list)
    for fixture in fixtures:
        categories[fixture.get("category", "?")].append(fixture)
    for category in sorted(categories):
        if args.category and category != args.category:
            continue
        rows = []
        for fixture in categories[category]:
            ident = fixture["id"]
            if args.flagged and ident not in found:
                continue
            if args.decision and args.decision not in decisions_of(fixture):
                continue
            rule = fixture.get("rule") or {}
            mark = "!" if ident in found else " "
            quote = (rule.get("quote") or "")[:90]
            rows.append(
                f"{mark} {ident:60} {fixture['level']:11} {rule.get('decision') or '-':28} {quote}"
            )
            rows.extend(f"      ! {reason}" for reason in found.get(ident, []))
            if args.parts:
                rows.extend(parts_lines(fixture))
        if rows:
            print(f"## {category}")
            print("\n".join(rows))
            shown += sum(1 for row in rows if not row.startswith("      "))
    total = len(fixtures)
    required = sum(1 for f in fixtures if f["level"] == "required")
    named = sum(1 for f in fixtures if decisions_of(f))
    parted = [f for f in fixtures if any(s.get("recommend") for s in f.get("steps") or ())]
    parts = sum(len(s.get("recommend") or ()) for f in parted for s in f["steps"])
    print(
        f"\n{shown} shown of {total} fixtures: {required} required ({len(parted)} of them with "
        f"{parts} recommended part(s)), {total - required} recommended, {named} name a "
        f"decision; {len(found)} flagged",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
