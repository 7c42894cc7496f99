"""`simulate` with a fleet: one run served by the Python and the Node reference hosts at once.

RFD 2: "The protocol outcome is identical and only the language surface differs", and rolling
deployments "may serve compatible releases concurrently": whatever the routing, the bundled saga
ends as it does on one host, with the same timeline, and the hosts really share the run.
"""

from __future__ import annotations

import json

import pytest

from fakepeer.cases import repository_root
from fakepeer.cli import main
from fakepeer.server.host import HostFault
from fakepeer.server.releases import Connection, ReleaseRecord
from fakepeer.server.routing import FleetRegistry

PYTHON = str(repository_root() / "runners" / "python" / "conform")
NODE = str(repository_root() / "runners" / "node" / "conform")
SAGA = ["--function", "conform.saga", "--input", '{"order": "A-1"}', "--json"]
KILL_CHARGE = ["--fault", "crash:forward:charge*all"]
ROUTINGS = [
    ["--routing", "alternate"],
    ["--routing", "random", "--seed", "7"],
    ["--routing", "rolling"],
]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    status = main(["simulate", *SAGA, *args])
    captured = capsys.readouterr()
    return status, json.loads(captured.out)


def _lines(report: dict) -> list[str]:
    return [entry["line"] for entry in report["timeline"] if entry["kind"] == "invoke"]


@pytest.mark.parametrize("fault", [[], KILL_CHARGE, ["--server-restart", "1500", *KILL_CHARGE]])
@pytest.mark.parametrize("routing", ROUTINGS)
def test_a_fleet_ends_the_saga_as_one_host_does(
    capsys: pytest.CaptureFixture[str], routing: list[str], fault: list[str]
) -> None:
    alone_status, alone = _run(capsys, "--sdk", PYTHON, *fault)
    status, fleet = _run(capsys, "--sdk", PYTHON, "--sdk", NODE, *routing, *fault)
    assert status == alone_status
    assert fleet["outcome"] == alone["outcome"]
    assert _lines(fleet) == _lines(alone)
    assert fleet["callbacks"] == alone["callbacks"]
    hosts = [entry["host"] for entry in fleet["timeline"] if entry["kind"] == "invoke"]
    assert set(hosts) == {"python", "node"}, hosts  # both hosts served the run
    if routing[1] == "alternate":
        assert all(a != b for a, b in zip(hosts, hosts[1:], strict=False)), hosts
    if routing[1] == "rolling":  # python until the roll, node after it
        assert hosts == sorted(hosts, key=lambda host: host == "node"), hosts
        notes = [entry.get("text", "") for entry in fleet["timeline"]]
        assert any(text.startswith("rolling: node (rel-conform-1~2)") for text in notes)


def test_rolling_at_a_virtual_time(capsys: pytest.CaptureFixture[str]) -> None:
    status, fleet = _run(
        capsys,
        "--sdk",
        PYTHON,
        "--sdk",
        NODE,
        "--routing",
        "rolling",
        "--roll-at",
        "2s",
        *KILL_CHARGE,
    )
    assert status == 1 and fleet["outcome"]["status"] == "failed"
    served = [(entry["at_ms"], entry["host"]) for entry in fleet["timeline"] if "host" in entry]
    assert all(host == ("python" if at < 2000 else "node") for at, host in served), served


def test_fleet_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", *SAGA, "--routing", "nearest"]) == 2
    assert "--routing: expected one of alternate, random, rolling" in capsys.readouterr().err
    assert main(["simulate", *SAGA, "--sdk", PYTHON, "--sdk", NODE, "--release", "r1"]) == 2
    assert "--release: give one per --sdk (2), not 1" in capsys.readouterr().err
    assert main(["simulate", *SAGA, "--roll-at", "#2"]) == 2
    assert "--roll-at needs --routing rolling" in capsys.readouterr().err


def _connection(instance: str, position: int = 1) -> Connection:
    record = ReleaseRecord(("ws", "app"), "rel", True, {}, ("f",), position)
    return Connection(instance, ("ws", "app"), record, 1)


def test_alternate_never_picks_the_instance_before_when_another_is_in_the_pool() -> None:
    registry = FleetRegistry("alternate")
    a, b, c = (_connection(name) for name in "abc")
    picks = [registry.pick([a, b, c]).instance_id for _ in range(6)]
    assert picks == ["a", "b", "c", "a", "b", "c"]
    assert registry.pick([c]).instance_id == "c"  # only one: it serves again


def test_random_routing_is_seeded() -> None:
    pool = [_connection(name) for name in "abcd"]
    first = [FleetRegistry("random", 5).pick(pool).instance_id for _ in range(1)]
    again = [FleetRegistry("random", 5).pick(pool).instance_id for _ in range(1)]
    assert first == again


def test_a_release_reused_with_another_contract_breaks_the_fleet() -> None:
    registry = FleetRegistry()
    scope = {"workspace_id": "ws", "application_id": "app"}

    def body(instance: str, capabilities: list[str]) -> dict:
        return {
            "scope": scope,
            "release": {"kind": "versioned", "id": "rel-1"},
            "instance_id": instance,
            "contract": {"protocol_major": 1, "capabilities": capabilities},
            "functions": ["f"],
            "capacity": {"max_concurrent": 1},
        }

    registry.register(scope, body("a@1", ["timers"]))
    with pytest.raises(HostFault, match="b@2: registration refused .conflicting_release.*rel-1"):
        registry.register(scope, body("b@2", ["timers", "event_waits"]))
