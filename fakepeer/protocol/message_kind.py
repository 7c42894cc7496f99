"""One row of the message catalog: what a kind is (§14) and what the bench needs to drive it.

The rows themselves are data, in messages.py; a kind's body schema is in shapes.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["S->W", "W->S", "both", "B->H", "H->B"]


@dataclass(frozen=True)
class MessageKind:
    """One row of §14 plus what the bench needs to drive it."""

    name: str
    direction: Direction
    section: str
    #: A bench send of this kind opens a new exchange (`invoke` and bench-to-host `conform.*`).
    opens_exchange: bool = False
    #: A server answer the bench sends inside the current exchange (docs/fixtures.md Identifiers).
    server_answer: bool = False
    #: Where the body holds tagged values (§3): `/`-separated members, `*` for every array item,
    #: `*[member=text]` for the items whose member has that value. `value_positions` reads it.
    values: tuple[str, ...] = ()
    example: dict[str, Any] = field(default_factory=dict)

    @property
    def body(self) -> dict[str, Any]:
        """The JSON Schema of the body (shapes.py), the source of the generated schema files.

        Imported on first use: a run validates frames against the generated files instead."""
        from fakepeer.protocol.shapes import BODIES

        return BODIES[self.name]

    @property
    def required(self) -> tuple[str, ...]:
        """Body members every message of this kind has, in §14 order."""
        return tuple(self.body.get("required", ()))

    @property
    def optional(self) -> tuple[str, ...]:
        """The other body members, in §14 order (members some variants require come here)."""
        return tuple(name for name in _member_names(self.body) if name not in self.required)

    @property
    def members(self) -> tuple[str, ...]:
        """All body members in §14 order."""
        return self.required + self.optional


def _member_names(schema: dict[str, Any]) -> list[str]:
    """Property names of a body schema, then of its `allOf` branches, first mention first."""
    names = list(schema.get("properties", {}))
    for branch in schema.get("allOf", ()):
        for name in branch.get("then", {}).get("properties", {}):
            if name not in names:
                names.append(name)
    return names
