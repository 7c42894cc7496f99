"""§8 manifests: code-point sorting, no defaulted timeout, contents bytes, hash, §8.2 codes."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from ryusen_sdk import InvalidRegistryError, Registry


def _noop(ctx: object, input: object) -> None:
    return None


def test_manifest_is_sorted_by_code_point_and_hashed() -> None:
    registry = Registry()
    registry.add_function("b", _noop, "1h")
    registry.add_function("\U0001f600", _noop)
    registry.add_function("\uff5e", _noop)
    registry.add_function("a", _noop)
    registry.trigger("t", "z", "a")
    registry.trigger("t", "a", "b")
    registry.trigger("s", "e", "b")
    manifest = registry.manifest()
    assert manifest.function_ids == ["a", "b", "\uff5e", "\U0001f600"]
    assert manifest.functions[1] == {"id": "b", "timeout_ms": "3600000"}
    assert manifest.functions[0] == {"id": "a"}
    assert [(t["id"], t["event"]) for t in manifest.triggers] == [
        ("s", "e"),
        ("t", "a"),
        ("t", "z"),
    ]
    document = json.loads(manifest.contents)
    assert document["format"] == "ryusen.manifest-contents/1"
    assert manifest.hash == "sha256:" + hashlib.sha256(manifest.contents).hexdigest()
    assert base64.b64decode(manifest.contents_base64) == manifest.contents


def test_conformance_registry_contents_bytes() -> None:
    from conform_host.registry import build_registry

    manifest = build_registry({}).manifest()
    expected = (
        '{"format":"ryusen.manifest-contents/1","functions":[{"id":"conform.echo"},'
        '{"id":"conform.program"},{"id":"conform.saga","timeout_ms":"3600000"},'
        '{"id":"conform.unportable"}],"triggers":[{"event":"conform.echo.requested",'
        '"function":"conform.echo","id":"conform.echo.requested"},{"event":"order.created",'
        '"function":"conform.saga","id":"conform.saga.order-created"},{"event":"order.retried",'
        '"function":"conform.saga","id":"conform.saga.order-retried"}]}'
    )
    assert manifest.contents == expected.encode()


def test_duplicate_trigger_ids_are_kept() -> None:
    registry = Registry()
    registry.add_function("a", _noop)
    registry.trigger("t", "e", "a")
    registry.trigger("t", "e", "a")
    assert len(registry.manifest().triggers) == 2


@pytest.mark.parametrize(
    ("functions", "triggers", "code"),
    [
        ([("a", "bad"), ("", None)], [], "empty_function_id"),
        ([("a", "bad"), ("a", None)], [], "duplicate_function_id"),
        ([("a", "bad")], [("", "", "zz")], "invalid_timeout"),
        ([("a", "1ns")], [("", "e", "a")], "empty_trigger_id"),
        ([("a", None)], [("t", "", "zz")], "empty_event_name"),
        ([("a", None)], [("t", "e", "zz")], "undeclared_function"),
    ],
)
def test_validation_codes_in_order(functions: list, triggers: list, code: str) -> None:
    registry = Registry()
    for function_id, timeout in functions:
        registry.add_function(function_id, _noop, timeout)
    for trigger in triggers:
        registry.trigger(*trigger)
    with pytest.raises(InvalidRegistryError) as caught:
        registry.manifest()
    assert caught.value.category == "sdk.invalid_registry"
    assert caught.value.details == {"code": code}
    assert caught.value.retryable is False


@pytest.mark.parametrize("timeout", ["0s", "-1h", 0])
def test_zero_and_negative_run_timeouts_are_kept_as_zero(timeout: object) -> None:
    """D-RUN-TIMEOUT-ZERO: RFD 2 refuses neither; the §6 conversion makes both 0."""
    registry = Registry()
    registry.add_function("a", _noop, timeout)
    assert registry.manifest().functions == [{"id": "a", "timeout_ms": "0"}]


def test_decorator_api() -> None:
    registry = Registry()

    @registry.function("greet", timeout="1.5s")
    def greet(ctx: object, input: object) -> str:
        return "hi"

    registry.trigger("greet.requested", "greet.requested", greet)
    assert registry.handler("greet") is greet
    assert registry.manifest().functions == [{"id": "greet", "timeout_ms": "1500"}]
