"""An SDK's answer against the oracle's: the first difference, with its JSON pointer."""

from __future__ import annotations

import json
from collections.abc import Iterable

from fakepeer.oracle.model import Expectation


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split(pattern: str) -> list[str]:
    return [_unescape(token) for token in pattern.split("/")[1:]]


def _matches(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_matches(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and (head == "*" or head == path[0]) and _matches(rest, path[1:])


def without(document: object, patterns: Iterable[str]) -> object:
    """`document` (an envelope `{"kind", "body"}`) with every member a pattern names removed."""
    split = [_split(pattern) for pattern in patterns]

    def walk(node: object, path: list[str]) -> object:
        if isinstance(node, dict):
            return {
                k: walk(v, path + [k])
                for k, v in node.items()
                if not any(_matches(p, path + [k]) for p in split)
            }
        if isinstance(node, list):
            return [walk(v, path + [str(i)]) for i, v in enumerate(node)]
        return node

    return walk(document, [])


def first_difference(expected: object, actual: object, pointer: str = "") -> str | None:
    """The first place two JSON documents differ, as `pointer: expected X, got Y`."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            here = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
            if key not in actual:
                return f"{here}: expected {_show(expected[key])}, absent"
            if key not in expected:
                return f"{here}: unexpected {_show(actual[key])}"
            found = first_difference(expected[key], actual[key], here)
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(left, right, f"{pointer}/{index}")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{pointer}: expected {len(expected)} items, got {len(actual)}"
        return None
    if expected == actual and type(expected) is type(actual):
        return None
    return f"{pointer or '/'}: expected {_show(expected)}, got {_show(actual)}"


def answer_difference(
    expectation: Expectation, kind: object, body: object, vary: Iterable[str] = ()
) -> str | None:
    """None when `{kind, body}` is the answer the oracle demands (its open members and the
    `vary` patterns aside), else the first difference."""
    patterns = list(expectation.open) + list(vary)
    wanted = without({"kind": expectation.kind, "body": expectation.body}, patterns)
    got = without({"kind": kind, "body": body}, patterns)
    return first_difference(wanted, got)


def _show(value: object, limit: int = 160) -> str:
    shown = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[:limit] + "..."
