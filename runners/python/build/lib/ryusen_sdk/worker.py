"""Registration (§7.1), negotiation (§7.2) and manifest publication (§8.4) of a worker."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .codec import PROTOCOL_MAJOR, PROTOCOL_VERSION, version_major
from .errors import ProtocolError
from .hashing import hash_document
from .registry import Registry

VALUE_CODEC = "ryusen.tagged/1"
ALL_CAPABILITIES = (
    "child_invocations",
    "compensation",
    "event_emission",
    "event_waits",
    "json_convenience",
    "timers",
)


@dataclass(frozen=True)
class SdkInfo:
    """Free-text SDK and runtime metadata carried by `register`."""

    name: str = "ryusen-python"
    version: str = "0.1.0"
    language: str = "python"
    runtime: str = f"{platform.python_implementation()} {platform.python_version()}"

    def to_wire(self) -> dict[str, str]:
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "runtime": self.runtime,
        }


@dataclass(frozen=True)
class WorkerConfig:
    """Configuration of one worker: scope, optional release ID and stable instance identity.

    `release_id` None selects the explicitly unversioned group (§7.1).
    """

    workspace_id: str
    application_id: str
    instance_id: str
    release_id: str | None = None
    capabilities: Sequence[str] = ALL_CAPABILITIES
    max_concurrent: int = 1
    sdk: SdkInfo = field(default_factory=SdkInfo)

    def __post_init__(self) -> None:
        for name in ("workspace_id", "application_id", "instance_id"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string")
        if self.release_id is not None and (
            not isinstance(self.release_id, str) or not self.release_id
        ):
            raise ValueError("release_id is a non-empty string, or None for the unversioned group")
        if isinstance(self.max_concurrent, bool) or not isinstance(self.max_concurrent, int):
            raise ValueError("max_concurrent must be an integer")
        if not 1 <= self.max_concurrent <= 2**31 - 1:
            raise ValueError("max_concurrent must be at least 1")

    @property
    def scope(self) -> dict[str, str]:
        return {"workspace_id": self.workspace_id, "application_id": self.application_id}


def register_body(registry: Registry, config: WorkerConfig) -> dict[str, Any]:
    """The `register` body (§7.1) for a registry; raises `sdk.invalid_registry` if invalid."""
    manifest = registry.manifest()
    capabilities = sorted(set(config.capabilities))
    contract = {
        "protocol_major": PROTOCOL_MAJOR,
        "value_codec": VALUE_CODEC,
        "capabilities": capabilities,
    }
    functions = manifest.function_ids
    if config.release_id is not None:
        release: dict[str, str] = {"kind": "versioned", "id": config.release_id}
    else:
        group_document = {
            "contract": contract,
            "functions": functions,
            "manifest_hash": manifest.hash,
        }
        release = {"kind": "unversioned", "group": "unversioned:" + hash_document(group_document)}
    return {
        "scope": config.scope,
        "release": release,
        "instance_id": config.instance_id,
        "manifest_hash": manifest.hash,
        "functions": functions,
        "contract": contract,
        "versions": [PROTOCOL_VERSION],
        "capabilities": capabilities,
        "capacity": {"max_concurrent": config.max_concurrent},
        "sdk": config.sdk.to_wire(),
    }


@dataclass(frozen=True)
class Registration:
    """A successful negotiation: the agreed version and the negotiated capabilities."""

    version: str
    capabilities: list[str]


class RegistrationRefused(Exception):
    """The server refused the registration (`register_refused`), with the code it sent.

    An unknown code is still a refusal and is surfaced as sent (§7.2).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"registration refused: {code}: {message}")
        self.code = code
        self.message = message


def negotiate(ack: dict[str, Any], offered: Sequence[str]) -> Registration:
    """Apply the server's `register_ack` body (§7.2) or raise the `protocol.*` failure."""
    version = ack["version"]
    major = version_major(version)
    if major is None:
        raise ProtocolError("protocol.malformed", "/body/version", "version must be MAJOR.MINOR")
    if major != PROTOCOL_MAJOR:
        raise ProtocolError(
            "protocol.unsupported_version", "/body/version", f"major of {version} not spoken"
        )
    offer = set(offered)
    for index, name in enumerate(ack["required_capabilities"]):
        if name not in offer:
            raise ProtocolError(
                "protocol.unknown_capability",
                f"/body/required_capabilities/{index}",
                f"required capability {name!r} is not implemented",
            )
    accepted = set(ack["capabilities"])
    return Registration(version, sorted(offer & accepted))


def publish_body(
    registry: Registry, scope: dict[str, str], expected_parent: str | None
) -> dict[str, Any]:
    """The `publish_manifest` body (§8.4): always the complete manifest, never a delta."""
    manifest = registry.manifest()
    return {
        "scope": dict(scope),
        "expected_parent": expected_parent,
        "functions": manifest.functions,
        "triggers": manifest.triggers,
        "contents": manifest.contents_base64,
    }


@dataclass(frozen=True)
class Publication:
    """The server's answer to a publication, as the SDK surfaces it (§8.5)."""

    status: str  # "activated", "conflict" or "rejected"
    application_generation: str | None = None
    workspace_generation: str | None = None
    active_generation: str | None = None
    code: str | None = None


def publication_result(kind: str, body: dict[str, Any]) -> Publication:
    """Map `manifest_activated` / `manifest_conflict` / `manifest_rejected` to a result."""
    if kind == "manifest_activated":
        return Publication(
            "activated",
            application_generation=body["application_generation"],
            workspace_generation=body["workspace_generation"],
        )
    if kind == "manifest_conflict":
        return Publication("conflict", active_generation=body["active_generation"])
    return Publication("rejected", code=body["code"])
