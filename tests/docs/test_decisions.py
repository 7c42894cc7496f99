"""docs/decisions.md and the protocol documents (docs/protocol.md, docs/host-contract.md) answer
to RFD 2: quotes are verbatim, ids are cited, and the protocol points only at files that ship."""

from __future__ import annotations

import re

from fakepeer.authoring.coverage import decision_quotes, document_citations
from fakepeer.authoring.docs import (
    DECISIONS_PATH,
    HOST_CONTRACT_PATH,
    PROTOCOL_PATHS,
    decision_ids,
    load_rfd,
    protocol_sections,
)
from fakepeer.cases import load_fixtures, repository_root

ROOT = repository_root()


def test_every_decision_quotes_rfd_2_verbatim() -> None:
    rfd = load_rfd()
    quotes = decision_quotes()
    assert {ident for ident, _ in quotes} == set(decision_ids()), "a decision without RFD 2 text"
    wrong = [(ident, quote[:60]) for ident, quote in quotes if not rfd.contains(quote)]
    assert not wrong, f"decision quotes that are not RFD 2 text: {wrong}"


def test_every_decision_has_its_parts() -> None:
    text = (ROOT / DECISIONS_PATH).read_text(encoding="utf-8")
    blocks = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    assert len(blocks) == len(decision_ids()) >= 30
    for block in blocks:
        ident = block.split("\n", 1)[0]
        for part in ("- **RFD 2**:", "- **Decision**", "- **Why**:"):
            assert part in block, f"{ident} lacks {part}"
    assert len(set(decision_ids())) == len(decision_ids()), "a decision id is used twice"


def test_protocol_quotes_marked_rfd_2_are_verbatim() -> None:
    rfd = load_rfd()
    wrong = [c.quote[:70] for c in document_citations() if c.source == "protocol.md"]
    wrong = [quote for quote in wrong if not rfd.contains(quote)]
    assert not wrong, f"*RFD 2* quotes in docs/protocol.md that RFD 2 does not hold: {wrong}"


def _protocol_text() -> str:
    return "\n".join((ROOT / path).read_text(encoding="utf-8") for path in PROTOCOL_PATHS)


def test_protocol_cites_only_paths_that_ship() -> None:
    text = _protocol_text()
    cited = set(re.findall(r"`((?:docs|fakepeer|runners|fixtures|shared)/[^`<> ]+)`", text))
    missing = sorted(path for path in cited if not (ROOT / path).exists())
    assert not missing, f"docs/protocol.md cites paths that do not ship: {missing}"
    assert "spec-gaps" not in text


def test_decision_ids_in_protocol_and_fixtures_exist() -> None:
    known = set(decision_ids())
    text = _protocol_text()
    named = set(re.findall(r"\bD-[A-Z0-9]+(?:-[A-Z0-9]+)*", text))
    assert named <= known, f"docs/protocol.md names unknown decisions: {sorted(named - known)}"
    cited = {f.rule.decision for f in load_fixtures() if f.rule.decision}
    assert cited <= known


def test_no_fixture_note_points_at_a_document_that_does_not_ship() -> None:
    notes = [f.id for f in load_fixtures() if f.notes and "spec-gaps" in f.notes]
    assert not notes


def test_host_contract_holds_sections_12_and_13_under_their_numbers() -> None:
    """Fixtures cite §12.x and §13.x; the sections moved to docs/host-contract.md, numbers kept."""
    text = (ROOT / HOST_CONTRACT_PATH).read_text(encoding="utf-8")
    headings = re.findall(r"^#{2,3} (1[23](?:\.\d+)?)[. ]", text, flags=re.MULTILINE)
    assert {"12", "12.1", "12.4", "13", "13.2"} <= set(headings)
    assert {"12", "12.4", "13", "13.2", "14"} <= protocol_sections()
    cited = {
        ref
        for f in load_fixtures()
        for ref in re.findall(r"§(1[23](?:\.\d+)?)", f.rule.protocol or "")
    }
    assert cited and cited <= protocol_sections()
