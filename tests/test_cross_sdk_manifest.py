"""Both reference SDKs publish byte-identical manifests for the same registry (RFD 2 §8.3).

RFD 2: "both SDKs use the same canonical encoding, so either SDK publishing an unchanged
application produces the same bytes and does not create a new generation". This drives each
SDK's conformance host through `conform.publish` and hands the captured `publish_manifest`
bodies to the bench's own server model, which must see one generation, not two.
"""

from __future__ import annotations

import base64
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from fakepeer.protocol.canonical import hash_bytes
from fakepeer.protocol.manifest import Activation, ManifestStore
from fakepeer.transport import SubprocessTransport

ROOT = Path(__file__).resolve().parent.parent
SCOPE = {"workspace_id": "ws-cross", "application_id": "app-cross"}
HOSTS = {
    "python": ROOT / "runners" / "python" / "conform",
    "node": ROOT / "runners" / "node" / "conform",
}

# A registry in deliberately unsorted author order, with non-ASCII and astral-plane identifiers
# (code-point order differs from UTF-16 order there), timeouts that need §6 rounding, and a
# trigger list that repeats an id.
AWKWARD_REGISTRY = {
    "functions": [
        {"id": "zeta"},
        {"id": "\U0001f600-emoji", "timeout": "1.5s"},
        {"id": "\uff5e-fullwidth", "timeout": "1ns"},
        {"id": "alpha", "timeout": "2h30m"},
    ],
    "triggers": [
        {"id": "t2", "event": "b.event", "function": "zeta"},
        {"id": "t1", "event": "z.event", "function": "alpha"},
        {"id": "t1", "event": "a.event", "function": "\U0001f600-emoji"},
    ],
}


def _require_node() -> None:
    if shutil.which("node") is None or not (ROOT / "runners/node/node_modules").is_dir():
        pytest.fail("the Node SDK is not installed: run `npm ci --prefix runners/node`")


def _publish(host: Path, registry: dict[str, Any] | None) -> dict[str, Any]:
    """Ask one conformance host to publish and return its `publish_manifest` body."""
    transport = SubprocessTransport([str(host)])
    deadline = time.monotonic() + 30
    try:
        body: dict[str, Any] = {"scope": SCOPE, "expected_parent": None}
        if registry is not None:
            body["registry"] = registry
        request = {"version": "1.0", "kind": "conform.publish", "id": "x#1", "body": body}
        transport.send(json.dumps(request).encode(), deadline)
        answer = json.loads(transport.receive(deadline))
        assert answer["kind"] == "publish_manifest", answer
        return answer["body"]
    finally:
        transport.close()


@pytest.mark.parametrize("registry", [None, AWKWARD_REGISTRY], ids=["conformance", "awkward"])
def test_python_and_node_publish_identical_manifests(registry: dict[str, Any] | None) -> None:
    _require_node()
    bodies = {name: _publish(host, registry) for name, host in HOSTS.items()}
    python, node = bodies["python"], bodies["node"]

    assert base64.b64decode(python["contents"]) == base64.b64decode(node["contents"])
    assert hash_bytes(base64.b64decode(python["contents"])) == hash_bytes(
        base64.b64decode(node["contents"])
    )
    assert python == node

    store = ManifestStore(policy_max_timeout_ms=None)
    first = store.publish(SCOPE, python)
    again = store.publish(SCOPE, node)
    assert isinstance(first, Activation), first
    assert again == first, (
        "the Node SDK's identical publication must return the original activation"
    )
