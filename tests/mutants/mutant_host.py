#!/usr/bin/env python3
"""A conformance host running the Python reference SDK with ONE mutant fault: `mutant_host.py NAME`.

Why: the bench must catch broken SDKs; each mutant is the reference host with one patch from
`patches.py` applied in memory (the SDK's files are never modified). `NAME` "none" runs the
unpatched reference through the same wrapper, as the baseline of the kill matrix.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE.parents[1] / "runners" / "python"


def check(names: list[str]) -> int:
    """`--check NAME...`: apply each patch in a forked child; print `NAME: problem` per failure.

    The reference SDK is a moving target: a patch that no longer applies must be reported as
    such, never mistaken for a mutant the bench killed.
    """
    from patches import MUTANTS, apply_mutant, load_sdk

    load_sdk()  # once, before the forks: each child then applies its patch in milliseconds
    failures = 0
    for name in names or sorted(MUTANTS):
        pid = os.fork()
        if pid == 0:
            try:
                apply_mutant(name)
            except BaseException as exc:  # noqa: BLE001 - report any failure to apply
                print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        failures += status != 0
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    """Apply the named mutant, then serve exactly as `runners/python/host.py` does."""
    sys.path.insert(0, str(RUNNER))
    sys.path.insert(0, str(HERE))
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        return _help()
    if len(argv) >= 2 and argv[1] == "--check":
        return check(argv[2:])
    zygote = len(argv) == 4 and argv[1] == "--zygote"
    if zygote:
        argv = [argv[0], argv[2], argv[3]]
    elif len(argv) != 2 or argv[1].startswith("-"):
        print(f"{USAGE}\n(mutant_host.py --help lists the mutants)", file=sys.stderr)
        return 2
    from patches import MUTANTS, apply_mutant

    name = argv[1]
    if name.startswith("variation."):  # a legal variation (variations.py), not a fault
        from variations import VARIATIONS, apply_variation

        if name not in VARIATIONS:
            print(f"unknown variation {name!r}; known: {', '.join(VARIATIONS)}", file=sys.stderr)
            return 2
        apply_variation(name)
        return _serve(name)
    if name.startswith("fleet."):  # a fault only a fleet of SDKs shows (fleet_mutants.py)
        from fleet_mutants import FLEET_MUTANTS, apply_fleet_mutant

        if name not in FLEET_MUTANTS:
            print(
                f"unknown fleet mutant {name!r}; known: {', '.join(FLEET_MUTANTS)}", file=sys.stderr
            )
            return 2
        apply_fleet_mutant(name)
        return _serve(name)
    if name.startswith("http."):  # an HTTP mutant, or `http.none`: serve HTTP (§1.1)
        os.environ["RYUSEN_CONFORM_TRANSPORT"] = "http"
        name = "none" if name == "http.none" else name
    if name != "none" and name not in MUTANTS:
        print(f"unknown mutant {name!r}; known: {', '.join(sorted(MUTANTS))}", file=sys.stderr)
        return 2
    apply_mutant(name)
    return _serve(name, argv if zygote else None)


def _serve(name: str, zygote_argv: list[str] | None = None) -> int:
    """Serve as `runners/python/host.py` does, with whatever was patched in."""
    spec = importlib.util.spec_from_file_location("ryusen_reference_host", RUNNER / "host.py")
    assert spec is not None and spec.loader is not None
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)
    if zygote_argv is not None:
        argv = zygote_argv  # fork a fresh host per `zygote_client.py` (the kill matrix's isolation)
        from zygote import serve_forks

        def serve() -> int:
            print(f"mutant host: {name} (forked)", file=sys.stderr, flush=True)
            return host.run_with_deep_stack()

        return serve_forks(argv[2], serve)
    print(f"mutant host: {name}", file=sys.stderr, flush=True)
    return host.run_with_deep_stack()


USAGE = "usage: mutant_host.py NAME | none | --zygote NAME SOCKET | --check [NAME...] | --help"


def _help() -> int:
    """`--help`: what the host does, how to use it, and every mutant with what it breaks."""
    sys.path.insert(0, str(HERE))
    from patches import MUTANTS

    print(USAGE)
    print()
    print(__doc__.strip())
    print()
    print("  NAME          serve as the reference host with mutant NAME applied")
    print("  none          serve as the unpatched reference host (the baseline)")
    print("  http.NAME     an HTTP mutant, served over HTTP (http.none: the HTTP baseline)")
    print("  --check [NAME...]  report each named patch (default: all) that no longer applies")
    print("  --zygote NAME SOCKET  fork a fresh NAME host per tests/mutants/zygote_client.py")
    print()
    print("Use it as an SDK: ryusen-conform run --sdk 'python3 tests/mutants/mutant_host.py NAME'")
    print("Check one mutant fast: python -m tests.mutants.kill_matrix --only NAME")
    print()
    print(f"{len(MUTANTS)} mutants:")
    for name in sorted(MUTANTS):
        print(f"  {name}: {MUTANTS[name].fault}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
