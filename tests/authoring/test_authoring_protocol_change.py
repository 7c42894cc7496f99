"""docs/fixtures.md "Changing the protocol", end to end on a throw-away copy (issue 14.5).

Add an optional member `priority` to `invoke` in protocol 1.2: edit the catalog, regenerate the
schemas, see the consistency test name the protocol document until its §14 table says the same,
add a fixture that needs 1.2, and see the 1.1 reference SDK skip it (never fail it) while the
same SDK offering 1.2 runs and passes it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_ID = "envelope.invoke-priority-ignored"
FIXTURE = {
    "id": FIXTURE_ID,
    "title": "An invoke with the 1.2 member priority is answered as before",
    "rule": {
        "section": "Protocol",
        "quote": "the initial required message set evolves only additively within a major version",
        "protocol": "§9.1",
    },
    "category": "envelope",
    "level": "required",
    "protocol_version": "1.2",
    "capabilities": [],
    "steps": [
        {
            "send": {
                "kind": "invoke",
                "body": {
                    "run_id": "run-1",
                    "function_id": "conform.echo",
                    "mode": "discover",
                    "input": {"t": "str", "v": "x"},
                    "history": [],
                    "priority": 5,
                },
            }
        },
        {"expect": {"kind": "completed", "body": {"value": {"t": "str", "v": "x"}}}},
    ],
}


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "node_modules")
    for name in ("fakepeer", "fixtures", "docs", "scripts", "runners/python"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    shutil.copyfile(ROOT / "matrix.json", copy / "matrix.json")
    (copy / "tests" / "protocol").mkdir(parents=True)
    shutil.copyfile(
        ROOT / "tests" / "protocol" / "test_proto_catalog.py",
        copy / "tests" / "protocol" / "test_proto_catalog.py",
    )
    return copy


def _in(copy: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(copy))
    return subprocess.run(
        [sys.executable, *argv], cwd=copy, env=env, capture_output=True, text=True, timeout=300
    )


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_adding_an_optional_member_end_to_end(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    where = _in(copy, "-c", "import fakepeer; print(fakepeer.__file__)")
    assert where.stdout.strip().startswith(str(copy)), "the copy's own fakepeer must run"

    # 2-3: the catalog and the version
    with (copy / "fakepeer" / "protocol" / "shapes.py").open("a", encoding="utf-8") as shapes:
        shapes.write('\nBODIES["invoke"]["properties"]["priority"] = {"type": "integer"}\n')
    _replace(
        copy / "fakepeer" / "protocol" / "version.py",
        'PROTOCOL_VERSION = "1.1"',
        'PROTOCOL_VERSION = "1.2"',
    )
    _replace(
        copy / "fakepeer" / "protocol" / "version.py",
        'KNOWN_VERSIONS: tuple[str, ...] = ("1.0", "1.1")',
        'KNOWN_VERSIONS: tuple[str, ...] = ("1.0", "1.1", "1.2")',
    )
    # 4: regenerate; until the document agrees, the consistency test says what to edit
    assert _in(copy, "scripts/generate_schemas.py").returncode == 0
    schema = json.loads((copy / "fakepeer/protocol/schemas/invoke.schema.json").read_text())
    assert "priority" in schema["properties"]["body"]["properties"]
    catalog_test = (
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/protocol/test_proto_catalog.py",
    )
    disagree = _in(copy, *catalog_test)
    assert disagree.returncode == 1
    assert "invoke: docs/protocol.md §14 says" in disagree.stdout
    # 1: the protocol document's §14 row
    _replace(
        copy / "docs" / "protocol.md",
        "| `invoke` | S→W | run_id, function_id, mode, input, history, [target] |",
        "| `invoke` | S→W | run_id, function_id, mode, input, history, [target], [priority] |",
    )
    agree = _in(copy, *catalog_test)
    assert agree.returncode == 0, agree.stdout[-2000:]

    # 5: the fixture
    path = copy / "fixtures" / "envelope" / f"{FIXTURE_ID}.json"
    path.write_text(json.dumps(FIXTURE, indent=2), encoding="utf-8")
    validate = _in(copy, "-m", "fakepeer", "fixtures", "validate", str(path))
    assert validate.returncode == 0, validate.stderr
    too_new = {**FIXTURE, "protocol_version": "1.3"}
    path.write_text(json.dumps(too_new, indent=2), encoding="utf-8")
    refused = _in(copy, "-m", "fakepeer", "fixtures", "validate", str(path))
    assert refused.returncode == 2 and "/protocol_version" in refused.stderr
    path.write_text(json.dumps(FIXTURE, indent=2), encoding="utf-8")
    assert _in(copy, "-m", "fakepeer", "matrix").returncode == 0

    # 6: the 1.1 SDK skips the case with the reason; the same SDK offering 1.1 passes it
    report = copy / "report.json"
    old = _in(copy, "-m", "fakepeer", "run", "--sdk", "runners/python/conform", "-k", FIXTURE_ID,
              "--report-json", str(report))  # fmt: skip
    assert old.returncode == 0, old.stdout
    assert old.stdout.strip().splitlines()[-1] == "0 passed, 0 failed, 1 skipped"
    case = json.loads(report.read_text())["sdks"][0]["cases"][0]
    assert case["outcome"] == "skip"
    assert case["reason"] == "the fixture needs protocol 1.2; the SDK negotiated 1.1"
    _replace(
        copy / "runners" / "python" / "ryusen_sdk" / "codec.py",
        'PROTOCOL_VERSION = "1.1"',
        'PROTOCOL_VERSION = "1.2"',
    )
    new = _in(copy, "-m", "fakepeer", "run", "--sdk", "runners/python/conform", "-k", FIXTURE_ID)
    assert new.stdout.strip().splitlines()[-1] == "1 passed, 0 failed", new.stdout[-2000:]
