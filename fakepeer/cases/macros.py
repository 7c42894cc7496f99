"""Fixture macros (docs/fixtures.md "Macros"): expanded by the bench, never seen by an SDK.

Why here and not in the protocol model: macros are a fixture-authoring convenience. The value
rules themselves (how a plain number becomes an `f64` text) stay in `fakepeer.protocol.values`.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable, Iterable

from fakepeer.protocol.canonical import CanonicalizationError, canonical_bytes
from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.protocol.pointer import join
from fakepeer.protocol.values import plain_to_tagged

Path = tuple[str | int, ...]


class MacroError(ValueError):
    """A macro used wrongly; `pointer` locates it inside the document being expanded."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '(root)'}: {message}")
        self.pointer = pointer
        self.message = message


def is_macro(node: object) -> bool:
    """True for an object with exactly one member whose name starts with `$`."""
    return isinstance(node, dict) and len(node) == 1 and next(iter(node)).startswith("$")


def first_macro(node: object, path: Path = ()) -> tuple[str, str] | None:
    """(JSON pointer, name) of the first known macro in `node`, or None (document order)."""
    if isinstance(node, dict):
        if is_macro(node) and next(iter(node)) in _MACROS:
            return join(path), next(iter(node))
        children: Iterable[tuple[str | int, object]] = node.items()
    elif isinstance(node, list):
        children = enumerate(node)
    else:
        return None
    for key, value in children:
        found = first_macro(value, (*path, key))
        if found is not None:
            return found
    return None


def expand(node: object, path: Path = ()) -> object:
    """Return `node` with every macro expanded (a new document; the input is not changed)."""
    if is_macro(node):
        ((name, argument),) = node.items()  # type: ignore[union-attr]
        handler = _MACROS.get(name)
        if handler is None:
            known = ", ".join(sorted(_MACROS))
            raise MacroError(join(path), f"unknown macro {name!r} (known: {known})")
        return handler(argument, (*path, name))
    if isinstance(node, dict):
        return {key: expand(value, (*path, key)) for key, value in node.items()}
    if isinstance(node, list):
        return [expand(value, (*path, index)) for index, value in enumerate(node)]
    return node


def _plain(argument: object, path: Path) -> object:
    return _plain_value(argument, path)


def _plain_value(node: object, path: Path) -> object:
    """Convert plain notation (docs/host-contract.md §13.1) to a tagged value, honouring
    nested macros."""
    if is_macro(node):
        ((name, argument),) = node.items()  # type: ignore[union-attr]
        if name == "$tagged":
            return expand(argument, (*path, name))
        if name == "$bytes":
            return _bytes(argument, (*path, name))
        if name == "$plain":
            return _plain_value(argument, (*path, name))
        return _plain_value(expand(node, path), path)
    if isinstance(node, dict):
        return {"t": "object", "v": {k: _plain_value(v, (*path, k)) for k, v in node.items()}}
    if isinstance(node, list):
        return {"t": "array", "v": [_plain_value(v, (*path, i)) for i, v in enumerate(node)]}
    return _plain_scalar(node, path)


def _plain_scalar(node: object, path: Path) -> object:
    """A scalar through the protocol model's converter (the one definition of the f64 text)."""
    try:
        return plain_to_tagged(node, join(path))
    except (TypeError, ValueError) as exc:
        raise MacroError(join(path), f"$plain cannot express {node!r}: {exc}") from None


def _tagged(argument: object, path: Path) -> object:
    return expand(argument, path)


def _bytes(argument: object, path: Path) -> object:
    text = expand(argument, path)
    if not isinstance(text, str):
        raise MacroError(join(path), f"$bytes takes a string, got {_json_type(text)}")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise MacroError(join(path), "$bytes text has a lone surrogate") from None
    return {"t": "bytes", "v": _base64(data)}


@functools.lru_cache(maxsize=256)
def _base64(data: bytes) -> str:
    """Shared like `_repeated`: `$bytes` of a `$repeat` is as large."""
    return base64.b64encode(data).decode("ascii")


def _repeat(argument: object, path: Path) -> object:
    argument = expand(argument, path)
    if (
        not isinstance(argument, dict)
        or set(argument) != {"text", "times"}
        or not isinstance(argument["text"], str)
        or not isinstance(argument["times"], int)
        or isinstance(argument["times"], bool)
        or argument["times"] < 0
    ):
        raise MacroError(join(path), '$repeat takes {"text": <string>, "times": <integer >= 0>}')
    size = len(argument["text"].encode("utf-8", "surrogatepass")) * argument["times"]
    if size > MAX_FRAME_BYTES:
        raise MacroError(
            join(path),
            f"$repeat makes {size} bytes of text, more than a whole frame holds "
            f"({MAX_FRAME_BYTES} bytes, docs/protocol.md §1)",
        )
    return _repeated(argument["text"], argument["times"])


@functools.lru_cache(maxsize=256)
def _repeated(text: str, times: int) -> str:
    """One string per distinct `$repeat`, shared by every fixture that writes it (a near-limit
    value is a MiB of text; a corpus holds few distinct ones but may repeat them in many files)."""
    return text * times


def _canonical(argument: object, path: Path) -> bytes:
    document = expand(argument, path)
    try:
        return canonical_bytes(document)
    except CanonicalizationError as exc:
        raise MacroError(join(path), f"no canonical JSON form: {exc}") from None


def _jcs_base64(argument: object, path: Path) -> object:
    return base64.b64encode(_canonical(argument, path)).decode("ascii")


def _sha256_jcs(argument: object, path: Path) -> object:
    return "sha256:" + hashlib.sha256(_canonical(argument, path)).hexdigest()


def _concat(argument: object, path: Path) -> object:
    if not isinstance(argument, list):
        raise MacroError(
            join(path), f"$concat takes an array of strings, got {_json_type(argument)}"
        )
    parts = []
    for index, item in enumerate(argument):
        value = expand(item, (*path, index))
        if not isinstance(value, str):
            raise MacroError(
                join((*path, index)), f"$concat parts must be strings, got {_json_type(value)}"
            )
        parts.append(value)
    return "".join(parts)


def _json_type(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "null" if value is None else "number"
    )


_MACROS: dict[str, Callable[[object, Path], object]] = {
    "$plain": _plain,
    "$tagged": _tagged,
    "$bytes": _bytes,
    "$repeat": _repeat,
    "$jcs_base64": _jcs_base64,
    "$sha256_jcs": _sha256_jcs,
    "$concat": _concat,
}

MACRO_NAMES: frozenset[str] = frozenset(_MACROS)

__all__ = ["MACRO_NAMES", "MacroError", "expand", "is_macro"]
