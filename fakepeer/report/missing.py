"""A piece of the host contract the host lacks, reported once: the trace, a control message.

Why: a host written against an older corpus that lacks `conform.trace` would otherwise show as
425 error rows that say the same thing, and its real differences would be lost among them. Each
missing piece is one finding per SDK: what it is, the section and the file to read, how many of
its cases answered as expected, and which ones also differ in their answers (those are listed
with their diffs as usual). The cases still do not pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fakepeer.protocol.messages import KINDS
from fakepeer.session.results import CaseResult

HOST_CONTRACT = "docs/host-contract.md"


@dataclass(frozen=True)
class MissingPiece:
    """The cases of one SDK that needed one missing piece."""

    piece: str
    cases: tuple[CaseResult, ...]

    @property
    def section(self) -> str:
        kind = KINDS.get(self.piece)
        return f"§{kind.section}" if kind is not None else "§12"

    @property
    def file(self) -> str:
        """The document that holds the section (§12-§13 live in the host contract)."""
        kind = KINDS.get(self.piece)
        major = kind.section.split(".")[0] if kind is not None else "12"
        return HOST_CONTRACT if major in ("12", "13") else "docs/protocol.md"

    @property
    def differ(self) -> tuple[str, ...]:
        """The cases that also differ in their answers (findings besides the missing piece)."""
        return tuple(case.id for case in self.cases if case.findings)

    @property
    def as_expected(self) -> int:
        return len(self.cases) - len(self.differ)

    def line(self) -> str:
        """One line: `conform.trace is missing (docs/host-contract.md §12.4): …`."""
        differ = self.differ
        listed = f": {', '.join(differ)}" if differ else ""
        return (
            f"the host lacks {self.piece} (read {self.file} {self.section}): {len(self.cases)} "
            f"case(s) needed it and do not pass; {self.as_expected} of them answered as "
            f"expected, {len(differ)} also differ in their answers{listed}"
        )

    def to_json(self) -> dict:
        return {
            "piece": self.piece,
            "section": self.section,
            "file": self.file,
            "cases": len(self.cases),
            "answered_as_expected": self.as_expected,
            "also_differ": list(self.differ),
        }


def missing_pieces(results: Iterable[CaseResult]) -> list[MissingPiece]:
    """One entry per missing piece, in the order it was first met."""
    by_piece: dict[str, list[CaseResult]] = {}
    for case in results:
        if case.missing:
            by_piece.setdefault(case.missing, []).append(case)
    return [MissingPiece(piece, tuple(cases)) for piece, cases in by_piece.items()]
