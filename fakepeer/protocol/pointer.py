"""RFC 6901 JSON pointers, the one home of their escaping: built for every error message and
diff, split for `vary` and `derive`, resolved for `derive` and `$ref`."""

from __future__ import annotations

from collections.abc import Iterable


def escape(segment: str | int) -> str:
    """Escape one reference token (`~` -> `~0`, `/` -> `~1`)."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def join(segments: Iterable[str | int]) -> str:
    """Return the pointer for a path of keys and indexes (`""` for the root)."""
    return "".join("/" + escape(segment) for segment in segments)


def split(pointer: str) -> list[str]:
    """Split a pointer into unescaped reference tokens; `""` is the root (no tokens)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/', got {pointer!r}")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def resolve(document: object, pointer: str) -> object:
    """Return the value at `pointer`; raise KeyError when it does not exist."""
    node = document
    for token in split(pointer):
        if isinstance(node, dict):
            if token not in node:
                raise KeyError(pointer)
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node) or (token != "0" and token[0] == "0"):
                raise KeyError(pointer)
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node
