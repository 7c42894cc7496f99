"""Turning untrusted text into HTML text: every byte an SDK sent ends up here before the page.

SDK payloads may hold markup (`<script>`), lone surrogates (which UTF-8 cannot encode) and control
characters (which HTML forbids); each is shown as text, never interpreted.
"""

from __future__ import annotations

import html
import json
import re

# Lone surrogates cannot be written as UTF-8; C0/C1 controls other than tab, LF and CR are parse
# errors in HTML. Both are shown as the JSON escape that names them.
_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_ANCHOR_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def text(value: object) -> str:
    """Escape for element content (quotes stay as they are: JSON is full of them)."""
    return html.escape(_UNSHOWABLE.sub(_visible, str(value)), quote=False)


def attr(value: object) -> str:
    """Escape for a double-quoted attribute value."""
    return html.escape(_UNSHOWABLE.sub(_visible, str(value)), quote=True)


def pretty_json(value: object) -> str:
    """Indented JSON, escaped for HTML; a lone surrogate stays the `\\udXXX` escape it came as."""
    try:
        dumped = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        dumped = repr(value)
    return text(dumped)


def compact_json(value: object) -> str:
    """One-line JSON, escaped for HTML (diff values)."""
    try:
        dumped = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        dumped = repr(value)
    return text(dumped)


def anchor(sdk_index: int, case_id: str) -> str:
    """The id of a case's details element: unique per SDK and case, safe in a URL fragment."""
    safe = _ANCHOR_UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", case_id)
    return f"case-{sdk_index}-{safe}"


def category_anchor(category: str) -> str:
    return "cat-" + _ANCHOR_UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", category)
