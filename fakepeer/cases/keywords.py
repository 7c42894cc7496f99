"""`-k EXPR`: pytest-style keyword expressions over a fixture's id and category.

A name matches when it is a case-insensitive substring of the fixture's id or of its category;
names combine with `and`, `or`, `not` and parentheses (`not` binds tightest, then `and`, then
`or`), as in pytest. A name is any run of characters other than spaces and parentheses, so ids
such as `values.f64-1e21` need no quoting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_OPERATORS = ("and", "or", "not")
#: Deepest nesting of parentheses and `not` accepted: the parser and the matcher it builds
#: recurse once per level, so 100,000 `(` would exhaust the stack (a traceback, not a message).
MAX_NESTING = 100

Matcher = Callable[[str], bool]  # the fixture's "id category" text, lowercased -> bool


class KeywordError(ValueError):
    """An expression that cannot be parsed; the message points at the place."""


@dataclass(frozen=True)
class Keywords:
    """A parsed `-k` expression."""

    text: str
    _matches: Callable[[tuple[str, str]], bool]

    @classmethod
    def parse(cls, text: str) -> Keywords:
        tokens = _tokens(text)
        if not tokens:
            raise KeywordError(f"-k {text!r}: the expression is empty")
        parser = _Parser(text, tokens)
        matches = parser.expression()
        if parser.position < len(tokens):
            parser.fail(f"unexpected {tokens[parser.position]!r}")
        return cls(text, matches)

    def matches(self, ident: str, category: str) -> bool:
        return self._matches((ident.lower(), category.lower()))


def _tokens(text: str) -> list[str]:
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # only trailing spaces are left
            break
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent: expression = and_expr ('or' and_expr)*; and_expr = not_expr ('and'
    not_expr)*; not_expr = 'not' not_expr | '(' expression ')' | NAME."""

    def __init__(self, text: str, tokens: list[str]) -> None:
        self.text = text
        self.tokens = tokens
        self.position = 0
        self.depth = 0

    def fail(self, problem: str) -> None:
        shown = (
            self.text
            if len(self.text) <= 80
            else f"{self.text[:60]}... ({len(self.text):,} characters)"
        )
        raise KeywordError(f"-k {shown!r}: {problem}")

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            self.fail("the expression ends too early")
        self.position += 1
        return token  # type: ignore[return-value]

    def expression(self) -> Callable[[tuple[str, str]], bool]:
        parts = [self.and_expression()]
        while self.peek() == "or":
            self.take()
            parts.append(self.and_expression())
        return parts[0] if len(parts) == 1 else (lambda item: any(p(item) for p in parts))

    def and_expression(self) -> Callable[[tuple[str, str]], bool]:
        parts = [self.not_expression()]
        while self.peek() == "and":
            self.take()
            parts.append(self.not_expression())
        return parts[0] if len(parts) == 1 else (lambda item: all(p(item) for p in parts))

    def not_expression(self) -> Callable[[tuple[str, str]], bool]:
        token = self.take()
        if token in ("not", "("):
            self.depth += 1
            if self.depth > MAX_NESTING:
                self.fail(f"nested deeper than {MAX_NESTING} levels of '(' and 'not'")
        if token == "not":
            inner = self.not_expression()
            self.depth -= 1
            return lambda item: not inner(item)
        if token == "(":
            inner = self.expression()
            if self.peek() != ")":
                self.fail("a '(' is not closed")
            self.take()
            self.depth -= 1
            return inner
        if token == ")" or token in _OPERATORS:
            self.fail(f"expected a name, got {token!r}")
        needle = token.lower()
        return lambda item: needle in item[0] or needle in item[1]
