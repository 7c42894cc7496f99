"""RFC 6901 JSON pointers, the one home of their escaping: built for every error message and
diff, split for `vary` and `derive`, resolved for `derive` and `$ref`, matched with wildcards
for `vary` (`VaryPattern`: the fixture checks and the comparer both use it)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


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


class VaryPattern:
    """A JSON pointer whose segments may be `*` (one segment) or `**` (any number of segments)."""

    def __init__(self, pointer: str) -> None:
        self.pointer = pointer
        self.tokens = tuple(split(pointer))

    def matches(self, path: Sequence[str]) -> bool:
        return _match(self.tokens, tuple(path))

    def may_match_below(self, path: Sequence[str]) -> bool:
        """True when some path extending `path` could match (prunes the walk)."""
        return _prefix_match(self.tokens, tuple(path))


def _match(tokens: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not tokens:
        return not path
    head, rest = tokens[0], tokens[1:]
    if head == "**":
        return any(_match(rest, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    return (head == "*" or head == path[0]) and _match(rest, path[1:])


def _prefix_match(tokens: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not path:
        return True
    if not tokens:
        return False
    head, rest = tokens[0], tokens[1:]
    if head == "**":
        return True
    return (head == "*" or head == path[0]) and _prefix_match(rest, path[1:])
