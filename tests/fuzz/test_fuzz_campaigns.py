"""Short fuzz campaigns: the reference SDKs survive; deliberately broken echo hosts are caught.

A caught host yields a fixture file that validates, passes against the reference SDK and fails
against the broken host, which is what makes a counterexample worth committing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fakepeer.cases import load_fixtures, repository_root
from fakepeer.fuzz import FuzzSetupError, run_campaign
from fakepeer.fuzz.cli import register_commands
from fakepeer.session import Outcome, command_target, default_target
from fakepeer.session.targets import SdkTarget
from fakepeer.suite import RunOptions, run_suite

EXAMPLES = 150
SEED = 20261130
ROOT = repository_root()
NODE_HOST = ROOT / "runners" / "node" / "conform"
MUTANT_HOST = ROOT / "tests" / "mutants" / "mutant_host.py"


def mutant(name: str) -> SdkTarget:
    return command_target(f"{sys.executable} {MUTANT_HOST} {name}", cwd=ROOT)


def _report(label: str, result) -> None:
    print(f"\n{label}: {result.sent} documents, {result.seconds:.2f} s, {result.rate:.0f}/s")


def test_python_reference_sdk_survives_a_campaign() -> None:
    result = run_campaign(default_target(), examples=EXAMPLES, seed=SEED)
    _report("python reference", result)
    assert result.failures == [], [f.problem for f in result.failures]
    assert result.sent >= 2 * EXAMPLES


def test_node_reference_sdk_survives_a_campaign() -> None:
    if not (ROOT / "runners" / "node" / "node_modules").is_dir():
        pytest.fail("runners/node/node_modules is missing: run `npm ci --prefix runners/node`")
    if shutil.which("node") is None:
        pytest.fail("the Node.js reference SDK needs `node` (Node.js 20) on PATH")
    result = run_campaign(command_target(str(NODE_HOST)), examples=EXAMPLES, seed=SEED)
    _report("node reference", result)
    assert result.failures == [], [f.problem for f in result.failures]


def _bench(target: SdkTarget, fixture_file: Path) -> Outcome:
    fixtures = load_fixtures([fixture_file])
    run = run_suite([target], fixtures, RunOptions(timeout=10.0)).sdks[0]
    return run.results[0].raw_outcome


@pytest.mark.parametrize(
    ("name", "tag"),
    [("u64-decoded-as-i64", "u64"), ("negative-zero-lost", "f64")],
)
def test_broken_echo_host_is_caught_with_a_fixture(name: str, tag: str, tmp_path: Path) -> None:
    result = run_campaign(mutant(name), examples=EXAMPLES, seed=SEED, out=tmp_path)
    _report(name, result)
    assert [failure.prop for failure in result.failures] == ["round-trip"]
    failure = result.failures[0]
    assert failure.case.doc["t"] == tag, failure.case.doc  # reduced to the one bad scalar
    assert failure.path is not None and failure.path.is_file()
    assert failure.path.parent.name == "values"
    document = failure.fixture
    assert document["category"] == "values" and document["level"] == "required"
    assert "must preserve the distinctions above" in document["rule"]["quote"]
    assert _bench(mutant(name), failure.path) is Outcome.FAIL
    assert _bench(default_target(), failure.path) is Outcome.PASS


@pytest.mark.parametrize("name", ["lenient-base64", "lone-surrogates-accepted"])
def test_accepting_host_is_caught_with_a_refusal_fixture(name: str, tmp_path: Path) -> None:
    result = run_campaign(mutant(name), examples=EXAMPLES, seed=SEED, out=tmp_path)
    _report(name, result)
    assert [failure.prop for failure in result.failures] == ["refusal"]
    failure = result.failures[0]
    assert "send_raw" in failure.fixture["steps"][0]
    assert failure.fixture["steps"][1]["expect"]["kind"] == "protocol_error"
    assert failure.path is not None
    assert _bench(mutant(name), failure.path) in (Outcome.FAIL, Outcome.ERROR)
    assert _bench(default_target(), failure.path) is Outcome.PASS


def test_fixed_seed_reproduces_the_same_counterexample(tmp_path: Path) -> None:
    first = run_campaign(mutant("null-member-dropped"), examples=EXAMPLES, seed=SEED)
    second = run_campaign(mutant("null-member-dropped"), examples=EXAMPLES, seed=SEED)
    assert [f.fixture for f in first.failures] == [f.fixture for f in second.failures]
    assert first.failures


def test_fuzz_command_in_the_cli_and_mountable(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fakepeer", "fuzz", "--examples", "20", "--seed", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 counterexample(s)" in done.stdout
    app = typer.Typer()
    register_commands(app)

    @app.command()
    def other() -> None:
        """A second command, so `fuzz` is a subcommand as in ryusen-conform."""

    command = f"{sys.executable} {MUTANT_HOST} negative-zero-lost"
    outcome = CliRunner().invoke(
        app, ["fuzz", "--sdk", command, "--examples", "60", "--seed", "7", "--out", str(tmp_path)]
    )
    assert outcome.exit_code == 1, outcome.output
    assert "COUNTEREXAMPLE (round-trip)" in outcome.output
    assert '"id": "values.fuzz-round-trip-' in outcome.output
    assert list((tmp_path / "values").glob("values.fuzz-round-trip-*.json"))


def test_an_sdk_that_cannot_start_is_a_setup_error() -> None:
    host = ROOT / "tests" / "hosts" / "exit_before_register.py"
    with pytest.raises(FuzzSetupError, match="exited with status 3"):
        run_campaign(command_target(f"{sys.executable} {host}"), examples=5, seed=SEED)


def test_a_crash_on_echo_is_a_counterexample() -> None:
    host = ROOT / "tests" / "hosts" / "crash_on_case.py"
    target = command_target(f"{sys.executable} {host} fuzz", cwd=ROOT)  # dies on every echo
    result = run_campaign(target, examples=5, seed=SEED, timeout=5.0)
    assert {failure.prop for failure in result.failures} == {"round-trip", "refusal"}
    assert all("the SDK broke: crashed" in failure.problem for failure in result.failures)
