"""Protocol minors (docs/fixtures.md "Levels and protocol versions"): a 1.1 fixture is skipped for
an SDK that negotiated 1.0, with the reason, and never failed; the same cases run on a 1.1 SDK."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fakepeer.cases import load_fixtures
from fakepeer.protocol.version import BASE_VERSION, PROTOCOL_VERSION
from tests.support.helpers import HOSTS, REPO, run_cli

OLD_HOST = f"{sys.executable} {HOSTS / 'protocol_1_0_host.py'}"
#: A fixture every 1.0 SDK runs, beside the 1.1 ones, so the 1.0 host is shown to be working.
PLAIN_ID = "discovery.boundary-after-replayed-steps"


def _newer_ids() -> list[str]:
    corpus = load_fixtures([REPO / "fixtures"])
    return sorted(f.id for f in corpus if f.protocol_version != BASE_VERSION)


def _run(sdk: str, ids: list[str], report: Path) -> list[dict]:
    expression = " or ".join(ids)
    result = run_cli("run", "--sdk", sdk, "-k", expression, "--report-json", str(report))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    return json.loads(report.read_text())["sdks"][0]["cases"]


def test_the_corpus_has_fixtures_of_the_newer_minor() -> None:
    assert PROTOCOL_VERSION == "1.1"
    assert len(_newer_ids()) >= 5


def test_a_1_0_sdk_skips_every_1_1_fixture_with_the_reason(tmp_path: Path) -> None:
    newer = _newer_ids()
    cases = {c["id"]: c for c in _run(OLD_HOST, [*newer, PLAIN_ID], tmp_path / "old.json")}
    assert cases[PLAIN_ID]["outcome"] == "pass"
    for ident in newer:
        assert cases[ident]["outcome"] == "skip", cases[ident]
        if cases[ident]["category"] == "http":  # skipped on stdio whatever the version
            continue
        assert cases[ident]["reason"] == ("the fixture needs protocol 1.1; the SDK negotiated 1.0")


def test_a_1_1_sdk_runs_and_passes_them(tmp_path: Path) -> None:
    newer = _newer_ids()
    cases = _run(str(REPO / "runners/python/conform"), newer, tmp_path / "new.json")
    assert {c["id"] for c in cases} >= set(newer)
    # http fixtures are skipped on stdio (their transport); every other one runs and passes
    wrong = [c for c in cases if c["outcome"] != ("skip" if c["category"] == "http" else "pass")]
    assert not wrong, wrong


def test_a_1_0_host_over_http_runs_every_http_fixture_authentication_included(
    tmp_path: Path,
) -> None:
    """D-HTTP-MAPPING: the transport's fixtures are gated by the transport, not the minor, so a
    1.0 host serving HTTP is never green with its authentication unchecked."""
    corpus = load_fixtures([REPO / "fixtures" / "http"])
    assert all(f.protocol_version == BASE_VERSION for f in corpus)
    ids = sorted(f.id for f in corpus)
    cases = _run(f"http+cmd:{OLD_HOST} --http", ids, tmp_path / "old-http.json")
    assert {c["id"] for c in cases} == {f.id for f in corpus}
    assert all(c["outcome"] == "pass" for c in cases), [c for c in cases if c["outcome"] != "pass"]
    assert any("request_authentication" in f.capabilities for f in corpus)
