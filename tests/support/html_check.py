"""A strict reading of the HTML report with html.parser: nesting, ids, links and scripts.

The report closes every element it opens, so any mismatch is a bug (usually unescaped text).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


@dataclass
class CellLink:
    """A link inside a cell of the tally or the grid (`<td class="cell s-...">`)."""

    cell_class: str
    href: str | None


@dataclass
class Page:
    problems: list[str] = field(default_factory=list)
    ids: Counter = field(default_factory=Counter)
    links: list[str] = field(default_factory=list)
    cell_links: list[CellLink] = field(default_factory=list)
    tags: Counter = field(default_factory=Counter)
    scripts: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # every text node outside scripts

    @property
    def text(self) -> str:
        return "".join(self.texts)

    resource_attributes: list[tuple[str, str]] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)  # id -> class


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.stack: list[tuple[str, str]] = []  # (tag, class)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, dict(attrs).get("class") or ""))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        page = self.page
        page.tags[tag] += 1
        if values.get("id"):
            page.ids[values["id"]] += 1
        if tag == "details" and values.get("id"):
            page.details[values["id"]] = values.get("class") or ""
        for name in ("src", "srcset", "data", "action", "formaction", "poster"):
            if name in values:
                page.resource_attributes.append((tag, name))
        if tag == "a":
            href = values.get("href")
            page.links.append(href or "")
            cell = next((cls for t, cls in reversed(self.stack) if t == "td"), None)
            if cell is not None and "cell" in cell.split():
                page.cell_links.append(CellLink(cell, href))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.page.problems.append(f"end tag of void element </{tag}>")
            return
        if not self.stack or self.stack[-1][0] != tag:
            open_tag = self.stack[-1][0] if self.stack else None
            self.page.problems.append(f"</{tag}> closes <{open_tag}> at {self.getpos()}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "script":
            self.page.scripts.append(data)
        else:
            self.page.texts.append(data)


def check_html(text: str) -> Page:
    checker = _Checker()
    checker.feed(text)
    checker.close()
    page = checker.page
    for tag, _ in checker.stack:
        page.problems.append(f"<{tag}> never closed")
    for ident, count in page.ids.items():
        if count > 1:
            page.problems.append(f"id {ident!r} used {count} times")
    return page
