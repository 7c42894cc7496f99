"""Which SDKs to run: `--sdk CMD` command lines, or the bundled Python reference SDK by default."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer.cases.loader import repository_root
from fakepeer.transport.base import Transport
from fakepeer.transport.inprocess import PREFIX, InProcessTransport, PythonHostError, load_host
from fakepeer.transport.process import CommandError, SubprocessTransport, parse_command


@dataclass
class SdkTarget:
    """A named way to start one SDK conformance host (a fresh one per call of `factory`)."""

    label: str
    command: list[str]
    factory: Callable[[], Transport] = field(repr=False)


def default_python_host() -> Path:
    return repository_root() / "runners" / "python" / "host.py"


def command_target(command: str, cwd: Path | None = None) -> SdkTarget:
    """An SDK started from a shell-like command line; raises CommandError when it cannot start.

    `python:[PATH:]MODULE:FUNCTION` names a host written in Python, run in the bench's own
    process through the in-process transport (see `transport/inprocess.py`);
    `http+cmd:COMMAND` a host the bench starts and reaches over HTTP, `http://127.0.0.1:PORT/P`
    an endpoint already running (see `transport/http.py`).
    """
    if command.startswith(PREFIX):
        try:
            host = load_host(command)
        except PythonHostError as exc:
            raise CommandError(str(exc)) from None
        return SdkTarget(
            label=command, command=[command], factory=lambda: InProcessTransport(host, command)
        )
    from fakepeer.transport import http  # http.client, ssl, email: only for an HTTP target

    if command.startswith(http.COMMAND_PREFIX):
        argv, factory = http.command_transport_factory(command, cwd)
        return SdkTarget(label=command, command=argv, factory=factory)  # type: ignore[arg-type]
    if command.startswith(http.URL_PREFIX):
        factory = http.url_transport_factory(command)
        return SdkTarget(label=command, command=[command], factory=factory)  # type: ignore[arg-type]
    argv = parse_command(command, cwd)
    return SdkTarget(
        label=command, command=argv, factory=lambda: SubprocessTransport(argv, cwd=cwd)
    )


def default_target() -> SdkTarget:
    """The bundled Python reference SDK: `[sys.executable, <repo>/runners/python/host.py]`."""
    host = default_python_host()
    if not host.is_file():
        raise CommandError(
            f"no --sdk given and the bundled Python reference SDK is missing ({host}); "
            "pass --sdk CMD to name a conformance host"
        )
    argv = [sys.executable, str(host)]
    return SdkTarget(
        label="python (bundled)",
        command=argv,
        factory=lambda: SubprocessTransport(argv, cwd=repository_root()),
    )


def targets_from_options(commands: list[str] | None) -> list[SdkTarget]:
    """One target per `--sdk` (in order), or the default when none is given."""
    if not commands:
        return [default_target()]
    labels = set()
    targets = []
    for command in commands:
        if command in labels:
            raise CommandError(f"--sdk {shlex.quote(command)} is given twice")
        labels.add(command)
        targets.append(command_target(command))
    return targets
