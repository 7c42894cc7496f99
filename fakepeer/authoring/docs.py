"""The documents fixtures answer to: RFD 2 (quotes, rule sentences) and the protocol (§).

The protocol's sections live in two files: docs/protocol.md (§1-§11, §14) and
docs/host-contract.md (§12-§13); `PROTOCOL_PATHS` names both, in that order.

Why one module: `validate`, `matrix` and `coverage` must agree on how a quote is matched and how
RFD 2 is split into rules, or a fixture could validate yet cover nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fakepeer.cases.loader import repository_root

RFD_PATH = Path("docs") / "rfd-2-execution-protocol.txt"
PROTOCOL_PATH = Path("docs") / "protocol.md"
HOST_CONTRACT_PATH = Path("docs") / "host-contract.md"
#: Every file holding numbered protocol sections.
PROTOCOL_PATHS = (PROTOCOL_PATH, HOST_CONTRACT_PATH)
DECISIONS_PATH = Path("docs") / "decisions.md"

#: A quote shorter than a whole sentence must be at least this many words long (docs/fixtures.md).
MIN_CLAUSE_WORDS = 6
#: Punctuation that ends a clause inside a sentence. Commas do not: they separate list items and
#: phrases that do not stand alone ("finite floats only", "malformed values").
_CLAUSE_MARKS = (";", ":", "—")
#: A clause may begin with one of these after its mark ("…; so a later invocation replays it").
_CONJUNCTIONS = frozenset({"and", "or", "but", "so", "while", "then", "yet", "nor"})

_SPACE = re.compile(r"\s+")
# A sentence ends at . ! or ? followed by whitespace; "step.run" or "1.5s" never split.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SECTION_HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", re.MULTILINE)


def normalise(text: str) -> str:
    """Collapse every whitespace run to one space (quotes are whitespace-insensitive)."""
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class Sentence:
    """One RFD 2 rule: a sentence, located in the normalised text by [start, end)."""

    number: int
    paragraph: int
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Rfd:
    """RFD 2, normalised, and its sentences in document order."""

    text: str
    sentences: tuple[Sentence, ...]

    def contains(self, quote: str) -> bool:
        """True when the quote occurs in RFD 2 (whitespace-insensitive, otherwise exact)."""
        needle = normalise(quote)
        return bool(needle) and needle in self.text

    def sentences_for(self, quote: str) -> list[Sentence]:
        """The sentences every occurrence of the quote overlaps (a quote may span two)."""
        needle = normalise(quote)
        found: dict[int, Sentence] = {}
        if not needle:
            return []
        start = self.text.find(needle)
        while start != -1:
            end = start + len(needle)
            for sentence in self.sentences:
                if sentence.start < end and start < sentence.end:
                    found[sentence.number] = sentence
            start = self.text.find(needle, start + 1)
        return [found[number] for number in sorted(found)]

    def is_full_clause(self, quote: str) -> bool:
        """True when some occurrence of the quote is one or more whole sentences, or a clause of
        at least MIN_CLAUSE_WORDS words bounded by a sentence edge or by `;`, `:` or `—` (a
        coordinating conjunction may open it). The rule is spelled out in docs/fixtures.md."""
        needle = normalise(quote)
        if not needle:
            return False
        starts = {sentence.start for sentence in self.sentences}
        ends = {sentence.end for sentence in self.sentences}
        long_enough = len(needle.split()) >= MIN_CLAUSE_WORDS
        start = self.text.find(needle)
        while start != -1:
            end = start + len(needle)
            if start in starts and end in ends:
                return True
            if long_enough and self._clause_start(start, starts) and self._clause_end(end, ends):
                return True
            start = self.text.find(needle, start + 1)
        return False

    def _clause_start(self, start: int, starts: set[int]) -> bool:
        before = self.text[:start].rstrip()
        if start in starts or before.endswith(_CLAUSE_MARKS):
            return True
        # ", and the payload limits …" may be quoted with or without its conjunction.
        first_word = self.text[start:].split(" ", 1)[0]
        if first_word in _CONJUNCTIONS and before.endswith((*_CLAUSE_MARKS, ",")):
            return True
        head, _, word = before.rpartition(" ")
        return word in _CONJUNCTIONS and head.rstrip().endswith((*_CLAUSE_MARKS, ","))

    def _clause_end(self, end: int, ends: set[int]) -> bool:
        if (
            end in ends
            or self.text[end - 1] in ";:"
            or (end + 1 in ends and self.text[end] in ".!?")
        ):
            return True
        return self.text[end:].lstrip().startswith(_CLAUSE_MARKS)


def parse_rfd(raw: str) -> Rfd:
    """Split RFD 2 into sentences; paragraphs are separated by blank lines, the title is skipped."""
    paragraphs = [normalise(block) for block in re.split(r"\n\s*\n", raw) if block.strip()]
    pieces: list[str] = []
    sentences: list[Sentence] = []
    offset = 0
    for index, paragraph in enumerate(paragraphs):
        if pieces:
            offset += 1  # the space joining paragraphs in the normalised text
        pieces.append(paragraph)
        is_title = index == 0 and not paragraph.endswith((".", ":", "!", "?"))
        position = 0
        for part in _SENTENCE_END.split(paragraph):
            local = paragraph.index(part, position)
            position = local + len(part)
            if not is_title:
                sentences.append(
                    Sentence(len(sentences) + 1, index + 1, part, offset + local, offset + position)
                )
        offset += len(paragraph)
    return Rfd(" ".join(pieces), tuple(sentences))


@lru_cache(maxsize=4)
def load_rfd(root: Path | None = None) -> Rfd:
    """RFD 2 from the repository (cached: validate and coverage read it once)."""
    base = root if root is not None else repository_root()
    return parse_rfd((base / RFD_PATH).read_text(encoding="utf-8"))


@lru_cache(maxsize=4)
def protocol_sections(root: Path | None = None) -> frozenset[str]:
    """The section numbers the protocol documents define (`2`, `3.4`, `12.4`, ...)."""
    base = root if root is not None else repository_root()
    found: set[str] = set()
    for path in PROTOCOL_PATHS:
        if (base / path).is_file():
            found.update(_SECTION_HEADING.findall((base / path).read_text(encoding="utf-8")))
    return frozenset(found)


_DECISION_HEADING = re.compile(r"^## (D-[A-Z0-9]+(?:-[A-Z0-9]+)*)\s*$", re.MULTILINE)


@lru_cache(maxsize=4)
def decision_ids(root: Path | None = None) -> tuple[str, ...]:
    """The decision ids docs/decisions.md defines (`## D-FRAMING` headings), in file order."""
    base = root if root is not None else repository_root()
    path = base / DECISIONS_PATH
    if not path.is_file():
        return ()
    return tuple(_DECISION_HEADING.findall(path.read_text(encoding="utf-8")))


_SINCE = re.compile(r"^- \*\*Since\*\*: (\d+\.\d+)", re.MULTILINE)


@lru_cache(maxsize=4)
def decision_versions(root: Path | None = None) -> dict[str, str]:
    """The protocol version each decision belongs to: its `- **Since**: 1.1` bullet, else 1.0
    (docs/fixtures.md: a fixture resting on a 1.1 decision needs protocol 1.1)."""
    base = root if root is not None else repository_root()
    path = base / DECISIONS_PATH
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    headings = list(_DECISION_HEADING.finditer(text))
    versions: dict[str, str] = {}
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        since = _SINCE.search(text, heading.end(), end)
        versions[heading.group(1)] = since.group(1) if since else "1.0"
    return versions


_SECTION_REF = re.compile(r"§(\d+(?:\.\d+)?)")


def section_refs(reference: str) -> list[str]:
    """The § numbers named in a `rule.protocol` text (`§7.2`, `§3.4 and §4.3`)."""
    return _SECTION_REF.findall(reference)
