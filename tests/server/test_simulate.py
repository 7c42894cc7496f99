"""`ryusen-conform simulate` against the reference hosts: the saga end to end, with and without
an injected failure, the same timeline on both SDKs, and one-line errors for bad arguments."""

from __future__ import annotations

import json

import pytest

from fakepeer.cases import repository_root
from fakepeer.cli import main

PYTHON = str(repository_root() / "runners" / "python" / "conform")
NODE = str(repository_root() / "runners" / "node" / "conform")
SAGA = ["--function", "conform.saga", "--input", '{"order": "A-1"}']
KILL_CHARGE = ["--fault", "crash:forward:charge*all"]


def _simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["simulate", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], sdk: str, *args: str) -> tuple[int, dict]:
    status, out, _ = _simulate(capsys, "--sdk", sdk, *SAGA, "--json", *args)
    return status, json.loads(out)


def test_saga_runs_to_completion(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _simulate(capsys, "--sdk", PYTHON, *SAGA)
    assert status == 0, err
    assert "forward charge #1" in out and "step_completed" in out
    assert 'completed, value {"charge": {"charged": "A-1"}, "reservation": "reserved:A-1"}' in out


def test_saga_with_injected_failure_compensates_reserve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, report = _json(capsys, NODE, *KILL_CHARGE)
    assert status == 1
    assert report["outcome"]["status"] == "failed"
    assert report["outcome"]["error"]["category"] == "server.attempt_lost"
    assert report["outcome"]["compensation"] == ["reserve"]
    lines = [entry["line"] for entry in report["timeline"] if entry["kind"] == "invoke"]
    assert lines[-1] == "@4000 main compensate reserve #1 -> compensation_completed"
    charge = [entry for entry in report["timeline"] if entry.get("step") == "charge"]
    assert [entry["attempt"] for entry in charge] == [1, 2, 3, 4, 5]
    assert len({entry["operation_id"] for entry in charge}) == 1


@pytest.mark.parametrize("fault", [[], KILL_CHARGE])
def test_both_reference_sdks_give_the_same_timeline(
    capsys: pytest.CaptureFixture[str], fault: list[str]
) -> None:
    """The protocol outcome is identical whatever the language surface."""
    _, python = _json(capsys, PYTHON, *fault)
    _, node = _json(capsys, NODE, *fault)
    assert [e.get("line", e.get("text")) for e in python["timeline"]] == [
        e.get("line", e.get("text")) for e in node["timeline"]
    ]
    assert python["outcome"] == node["outcome"]


def test_events_and_ambient_reach_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    program = {
        "ops": [
            {
                "op": "wait",
                "id": "w",
                "event": "go",
                "correlation": {"k": "v"},
                "timeout": "1h",
                "as": "w",
            }
        ]
    }
    status, out, err = _simulate(
        capsys,
        "--sdk",
        PYTHON,
        "--function",
        "conform.program",
        "--input",
        json.dumps(program),
        "--event",
        "2s=go{k=v,extra=1}:hello",
        "--json",
    )
    assert status == 0, err
    report = json.loads(out)
    assert report["outcome"]["value"] == {
        "t": "object",
        "v": {"w": {"t": "bytes", "v": "aGVsbG8="}},
    }
    assert report["elapsed_ms"] == 2000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--function ID is required"),
        (["--function", "conform.saga", "--input", "{"], "--input is not JSON"),
        (["--function", "nope"], "is not in the host's registry"),
        (["--function", "conform.saga", "--fault", "bogus"], "unknown fault 'bogus'"),
        (["--function", "conform.saga", "--fault", "crash*0"], "positive integer or 'all'"),
        (["--function", "conform.saga", "--event", "5=x"], "expected AT=NAME"),
        (["--function", "conform.saga", "--event", "soon=x:y"], "is not a time"),
        (["--function", "conform.saga", "--ambient", "novalue"], "expected KEY=VALUE"),
        (["--sdk", "/nonexistent/host", "--function", "conform.saga"], "does not exist"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    if "--sdk" not in args:
        args = ["--sdk", PYTHON, *args]
    status, _, err = _simulate(capsys, *args)
    assert status == 2
    lines = [line for line in err.splitlines() if line.startswith("ryusen-conform: error:")]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("fault", [[], KILL_CHARGE])
def test_readme_shows_real_simulate_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fault: list[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    _, out, _ = _simulate(capsys, "--sdk", PYTHON, *SAGA, *fault)
    readme = (repository_root() / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Simulating a whole run", 1)[1].split("\n## ", 1)[0]
    blocks = [block.strip("\n") for block in section.split("```text\n")[1:]]
    shown = [block.split("\n```", 1)[0] for block in blocks]
    assert out.rstrip("\n") in shown


@pytest.mark.parametrize("sdk", [PYTHON, NODE])
def test_trace_counts_every_physical_attempt(capsys: pytest.CaptureFixture[str], sdk: str) -> None:
    """A lost answer still ran its callback: three attempts of charge start it three times,
    discovery starts none (conform.trace, §12.4)."""
    status, report = _json(capsys, sdk, "--fault", "lost_answer:forward:charge*2", "--trace")
    assert status == 0
    assert report["callbacks"] == {
        "main reserve forward": 1,
        "main charge forward": 3,
        "main notify forward": 1,
    }
    discoveries = [e for e in report["timeline"] if e.get("mode") == "discover"]
    assert all(entry["trace"] == [] for entry in discoveries)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--history-limit", "2000"], "history_limit must be an integer from 0 to 1024"),
        (["--policy-max", "1x"], "--policy-max: '1x' is not a time"),
        (["--policy-default", "-5"], "--policy-default"),
        (["--worker", "500"], "--worker '500': expected AT=INSTANCE"),
        (["--worker", "5=w,busy=x"], "busy must be a whole number"),
        (["--server-restart", "soon"], "--server-restart: 'soon' is not a time"),
        (["--fault", "redeliver:forward:a+x"], "the delay after '+' must be whole milliseconds"),
        (["--fault", "crash+5"], "'+AFTER' applies to redeliver and rediscover only"),
        # every flag's bad value, one line each (issue 23): typer's own int check printed four
        (["--history-limit", "x"], "--history-limit: expected a whole number of at least 0"),
        (["--history-limit", "-1"], "--history-limit: expected a whole number of at least 0"),
        (["--history-limit", "1025"], "history_limit must be an integer from 0 to 1024"),
        (["--max-invocations", "0"], "--max-invocations: expected a whole number of at least 1"),
        (["--max-invocations", "many"], "--max-invocations: expected a whole number"),
        (["--policy-default", ""], "--policy-default: '' is not a time"),
        (["--policy-max", "-1"], "--policy-max: '-1' is not a time"),
        (["--server-restart", "-5"], "--server-restart: '-5' is not a time"),
        (["--worker", "x=w"], "--worker: 'x' is not a time"),
        (["--worker", "5=w,capacity=0"], "capacity must be a whole number, not '0'"),
        (["--worker", "5=w,colour=red"], "unknown member 'colour=red'"),
        (["--fault", "rediscover:sideways"], "unknown mode 'sideways'"),
        (["--fault", "redeliver:forward:a:0"], "the attempt must be a positive integer"),
        (["--fault", "crash:forward:a:1:2"], "a fault is KIND[:MODE[:STEP[:ATTEMPT]]]"),
        (["--fault", "rediscover+5*x"], "the count after '*' must be a positive integer or 'all'"),
        (["--fault", "http_503*0"], "the count after '*' must be a positive integer or 'all'"),
        (["--event", "5=n{k}:p"], "metadata pairs are key=value"),
        (["--input", '{"$bytes": 5}'], "--input /input/$plain/$bytes"),
    ],
)
def test_bad_policy_worker_and_fault_values_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, _, err = _simulate(capsys, "--sdk", PYTHON, *SAGA, *args)
    assert status == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_new_faults_and_policy_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A rediscovery and a server restart keep the timer's anchor; the policy maximum rejects
    conform.saga's 1h before anything runs."""
    program = '{"ops": [{"op": "sleep", "id": "t", "duration": "1s"}, {"op": "run", "id": "b"}]}'
    status, out, err = _simulate(
        capsys,
        "--sdk",
        PYTHON,
        "--function",
        "conform.program",
        "--input",
        program,
        "--json",
        "--fault",
        "rediscover:discover:t+300",
        "--server-restart",
        "600",
        "--worker",
        "100=worker-2,busy=1",
    )
    assert status == 0, err
    lines = [e["line"] for e in json.loads(out)["timeline"] if e["kind"] == "invoke"]
    assert lines == [
        "@0 main discover -> declared timer t",
        "@300 main discover -> declared timer t",
        "@600 main discover -> declared timer t",
        "@1000 main discover -> declared step b",
        "@1000 main forward b #1 -> step_completed",
        "@1000 main discover -> completed",
    ]
    status, out, _ = _simulate(capsys, "--sdk", PYTHON, *SAGA, "--policy-max", "30m", "--json")
    assert status == 1
    assert json.loads(out)["outcome"]["error"]["category"] == "server.manifest_rejected"


def test_max_invocations_stops_the_simulation(capsys: pytest.CaptureFixture[str]) -> None:
    """The string-parsed --max-invocations still bounds the run (exit 1: not completed)."""
    status, out, _ = _simulate(capsys, "--sdk", PYTHON, *SAGA, "--max-invocations", "2", "--json")
    assert status == 1
    report = json.loads(out)
    assert report["invocations"] == 2 and report["stopped"] == "stopped after 2 invocations"
