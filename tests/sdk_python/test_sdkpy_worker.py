"""§7 registration and negotiation, §8.4 publication bodies."""

from __future__ import annotations

import pytest
from conform_host.registry import build_registry
from ryusen_sdk.errors import ProtocolError
from ryusen_sdk.hashing import hash_document
from ryusen_sdk.worker import ALL_CAPABILITIES, WorkerConfig, negotiate, publish_body, register_body


def test_register_body_versioned_and_unversioned() -> None:
    registry = build_registry({})
    versioned = register_body(registry, WorkerConfig("ws", "app", "i-1", "rel-1"))
    assert versioned["release"] == {"kind": "versioned", "id": "rel-1"}
    assert versioned["functions"] == [
        "conform.echo",
        "conform.program",
        "conform.saga",
        "conform.unportable",
    ]
    assert versioned["capabilities"] == sorted(ALL_CAPABILITIES)
    assert versioned["contract"] == {
        "protocol_major": 1,
        "value_codec": "ryusen.tagged/1",
        "capabilities": sorted(ALL_CAPABILITIES),
    }
    assert versioned["versions"] == ["1.1"]
    unversioned = register_body(registry, WorkerConfig("ws", "app", "i-1", None))
    group = hash_document(
        {
            "contract": unversioned["contract"],
            "functions": unversioned["functions"],
            "manifest_hash": unversioned["manifest_hash"],
        }
    )
    assert unversioned["release"] == {"kind": "unversioned", "group": "unversioned:" + group}


def test_negotiation() -> None:
    offered = list(ALL_CAPABILITIES)
    ok = negotiate(
        {"version": "1.7", "capabilities": ["timers", "nope"], "required_capabilities": ["timers"]},
        offered,
    )
    assert (ok.version, ok.capabilities) == ("1.7", ["timers"])
    with pytest.raises(ProtocolError) as caught:
        negotiate({"version": "2.0", "capabilities": [], "required_capabilities": []}, offered)
    assert caught.value.category == "protocol.unsupported_version"
    assert caught.value.details == {"pointer": "/body/version"}
    with pytest.raises(ProtocolError) as caught:
        negotiate(
            {"version": "1.0", "capabilities": [], "required_capabilities": ["timers", "x", "y"]},
            offered,
        )
    assert caught.value.category == "protocol.unknown_capability"
    assert caught.value.details == {"pointer": "/body/required_capabilities/1"}


def test_publish_body_is_the_complete_manifest() -> None:
    registry = build_registry({})
    body = publish_body(registry, {"workspace_id": "ws", "application_id": "app"}, None)
    manifest = registry.manifest()
    assert body["expected_parent"] is None
    assert body["functions"] == manifest.functions
    assert body["triggers"] == manifest.triggers
    assert body["contents"] == manifest.contents_base64
