"""Which SDKs to run: `--sdk CMD` command lines, or the bundled Python reference SDK by default."""

from __future__ import annotations

import shlex
import sys
import threading
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


class EarlyStart:
    """Targets whose first host process starts now, before the bench loads its fixtures.

    A host's start (an interpreter, a runtime) then overlaps the loading instead of following
    it: the edit-run loop's one-fixture run waits for the slower of the two, not their sum. The
    first session of each target takes the started process; any later one starts its own. A
    start that fails is raised to that first session, as a start during the run would be.
    `close` ends what no session took (a usage error found while loading, Ctrl-C).
    """

    def __init__(self, targets: list[SdkTarget]) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Transport] = []
        self.targets = [self._early(target) for target in targets]

    def _early(self, target: SdkTarget) -> SdkTarget:
        factory = target.factory
        try:
            first: Transport | BaseException | None = factory()
        except (OSError, ValueError) as exc:
            first = exc
        if isinstance(first, Transport):
            self._waiting.append(first)

        def take() -> Transport:
            nonlocal first
            with self._lock:
                claimed, first = first, None
                if isinstance(claimed, Transport):
                    self._waiting.remove(claimed)
            if isinstance(claimed, BaseException):
                raise claimed
            return claimed if claimed is not None else factory()

        return SdkTarget(target.label, target.command, take)

    def close(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for transport in waiting:
            transport.close()
