"""Canonical fixture formatting (`fixtures fmt`): one layout so reviews show only real changes.

Layout: 2-space indent; a container stays on one line when it fits in the line width, otherwise
its members go one per line. Fixture-level keys follow a fixed order (`TOP_LEVEL_ORDER`); keys the
format does not know keep their author order after the known ones, so bodies read as written.
"""

from __future__ import annotations

import json
import re

from fakepeer.protocol import strictjson

LINE_WIDTH = 100
INDENT = "  "

TOP_LEVEL_ORDER = (
    "id",
    "title",
    "rule",
    "category",
    "level",
    "protocol_version",
    "capabilities",
    "notes",
    "steps",
)
RULE_ORDER = ("section", "quote", "decision", "protocol")
STEP_ORDER = (
    "send",
    "send_raw",
    "send_raw_base64",
    "expect",
    "vary",
    "recommend",
    "match",
    "derive",
)
SEND_ORDER = ("kind", "id", "version", "extra", "body")
EXPECT_ORDER = ("kind", "body")

_SURROGATE = re.compile("[\ud800-\udfff]")


def _ordered(node: dict, order: tuple[str, ...]) -> dict:
    """Return `node` with the keys of `order` first (in that order), then the rest as written."""
    result = {key: node[key] for key in order if key in node}
    result.update({key: value for key, value in node.items() if key not in result})
    return result


def order_fixture(document: object) -> object:
    """Apply the fixed key order to a fixture document (anything else is returned unchanged)."""
    if not isinstance(document, dict):
        return document
    result = _ordered(document, TOP_LEVEL_ORDER)
    if isinstance(result.get("rule"), dict):
        result["rule"] = _ordered(result["rule"], RULE_ORDER)
    if isinstance(result.get("steps"), list):
        result["steps"] = [_order_step(step) for step in result["steps"]]
    return result


def _order_step(step: object) -> object:
    if not isinstance(step, dict):
        return step
    result = _ordered(step, STEP_ORDER)
    if isinstance(result.get("send"), dict):
        result["send"] = _ordered(result["send"], SEND_ORDER)
    if isinstance(result.get("expect"), dict):
        result["expect"] = _ordered(result["expect"], EXPECT_ORDER)
    return result


def _string(text: str) -> str:
    """JSON string text, UTF-8 friendly; lone surrogates stay escaped so the file is valid UTF-8."""
    encoded = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)


def _inline(node: object) -> str:
    if isinstance(node, dict):
        members = ", ".join(f"{_string(key)}: {_inline(value)}" for key, value in node.items())
        return "{" + members + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_inline(item) for item in node) + "]"
    if isinstance(node, str):
        return _string(node)
    return json.dumps(node)


def _render(node: object, depth: int, prefix_width: int) -> str:
    inline = _inline(node)
    if len(INDENT) * depth + prefix_width + len(inline) <= LINE_WIDTH or not node:
        return inline
    if not isinstance(node, dict | list):
        return inline
    inner = INDENT * (depth + 1)
    if isinstance(node, dict):
        lines = []
        for key, value in node.items():
            head = f"{_string(key)}: "
            lines.append(inner + head + _render(value, depth + 1, len(head) + 1))
        return "{\n" + ",\n".join(lines) + "\n" + INDENT * depth + "}"
    lines = [inner + _render(item, depth + 1, 1) for item in node]
    return "[\n" + ",\n".join(lines) + "\n" + INDENT * depth + "]"


def format_document(document: object) -> str:
    """Return the canonical text of a fixture document, ending in one newline."""
    return _render(order_fixture(document), 0, 0) + "\n"


def format_text(text: str) -> str:
    """Reformat fixture JSON text; raises ValueError when it is not JSON or repeats a member.

    A repeated member is refused rather than silently dropped by formatting; so is a number
    that does not fit a double (it would be rewritten as Infinity) and nesting too deep to walk.
    """
    return format_document(strictjson.loads(text))


def is_fixture_text(text: str) -> bool:
    """Whether JSON text may be a fixture: an object with `id` and `steps` or a lifecycle
    scenario (`fmt --check` skipped all of those silently), or text that does not parse at all
    (a broken fixture is still a fixture, whose problem `fmt` reports)."""
    from fakepeer.cases.lifecycle import MEMBER

    try:
        document = strictjson.loads(text)
    except ValueError:
        return True
    return (
        isinstance(document, dict)
        and "id" in document
        and ("steps" in document or MEMBER in document)
    )
