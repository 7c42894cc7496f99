"""Run every mutant SDK over the whole fixture corpus and build the kill matrix.

Why: a fixture that catches no plausible bug may be checking nothing; a mutant that no fixture
catches is a hole in the corpus. Mutants come from both reference SDKs: the Python ones of
`patches.py` (`mutant_host.py NAME`) and the `node:` ones of `node_mutants.json`
(`node_mutant_host.js NAME`). A fixture *kills* a mutant when it fails or errors against the
mutant while it passes against the unpatched baseline of the same SDK (the same wrapper host with
`none`), so fixtures a reference SDK itself fails today never count as kills.

Regenerate `tests/mutants/KILL_MATRIX.md` from the repository root with:

    python -m tests.mutants.kill_matrix
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fakepeer.cases import Fixture, load_fixtures, repository_root
from fakepeer.session import Outcome, SdkRun, SdkTarget
from fakepeer.suite import RunOptions, run_suite
from fakepeer.transport.process import SubprocessTransport

from .node_mutants import NODE_MUTANTS, NODE_PREFIX, node_host_argv
from .patches import MUTANTS

HERE = Path(__file__).resolve().parent
MUTANT_HOST = HERE / "mutant_host.py"
MATRIX_FILE = HERE / "KILL_MATRIX.md"
BASELINE = "none"
NODE_BASELINE = "node:none"
#: Each SDK with mutants, and the label of its unpatched baseline run.
BASELINES = {"python": BASELINE, "node": NODE_BASELINE}
#: Seconds per case: the reference answers in milliseconds; a mutant that hangs costs this much.
CASE_TIMEOUT = 3.0
FAILING = (Outcome.FAIL, Outcome.ERROR)


@dataclass
class KillMatrix:
    """Which fixtures killed which mutant, against which baseline."""

    fixtures: list[str]
    #: SDK ("python", "node") -> fixtures its unpatched baseline fails (never counted as kills).
    baseline_failures: dict[str, list[str]]
    kills: dict[str, list[str]]
    seconds: float
    unapplicable: dict[str, str]

    def survivors(self) -> list[str]:
        """Mutants no fixture killed."""
        return [name for name, killers in self.kills.items() if not killers]

    def idle_fixtures(self) -> list[str]:
        """Fixtures passing at every baseline that killed no mutant."""
        used = {fixture for killers in self.kills.values() for fixture in killers}
        broken = {fixture for failures in self.baseline_failures.values() for fixture in failures}
        return [f for f in self.fixtures if f not in used and f not in broken]


def catalog() -> list[str]:
    """Every mutant of both SDKs: the Python ones, then the `node:` ones."""
    return in_catalog_order([*MUTANTS, *NODE_MUTANTS])


def sdk_of(name: str) -> str:
    """Which reference SDK a mutant (or baseline) patches: "python" or "node"."""
    return "node" if name.startswith(NODE_PREFIX) else "python"


def fault_of(name: str) -> str:
    """What the mutant breaks."""
    return NODE_MUTANTS[name] if sdk_of(name) == "node" else MUTANTS[name].fault


def host_argv(name: str) -> list[str]:
    """The wrapper host command of a mutant or of a baseline label."""
    if sdk_of(name) == "node":
        return node_host_argv("none" if name == NODE_BASELINE else name)
    return [sys.executable, str(MUTANT_HOST), name]


def mutant_target(name: str) -> SdkTarget:
    """A bench target that starts its SDK's wrapper host with one mutant applied."""
    argv = host_argv(name)
    root = repository_root()
    return SdkTarget(label=name, command=argv, factory=lambda: SubprocessTransport(argv, cwd=root))


def run_mutant(name: str, fixtures: Sequence[Fixture], timeout: float = CASE_TIMEOUT) -> SdkRun:
    """One bench run of the whole selection against one mutant (through the bench's API)."""
    result = run_suite([mutant_target(name)], fixtures, RunOptions(timeout=timeout, jobs=1))
    return result.sdks[0]


def unapplicable_mutants(names: Sequence[str]) -> dict[str, str]:
    """Mutants whose patch no longer applies to the current SDK, with the reason."""
    problems: dict[str, str] = {}
    for sdk, baseline in BASELINES.items():
        chosen = [name for name in names if sdk_of(name) == sdk]
        if not chosen:
            continue
        argv = [*host_argv(baseline)[:-1], "--check", *chosen]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
        found = {}
        for line in done.stdout.splitlines():
            name, _, reason = line.partition(": ")
            found[name] = reason
        if done.returncode != 0 and not found:
            found[f"<all {sdk}>"] = done.stderr.strip()[-2000:]
        problems.update(found)
    return problems


def in_catalog_order(names: Iterable[str]) -> list[str]:
    """The Python mutants, then the Node ones, each sorted by name."""
    return sorted(names, key=lambda name: (sdk_of(name) != "python", name))


def failing_ids(run: SdkRun) -> set[str]:
    return {case.id for case in run.results if case.raw_outcome in FAILING}


def build_kill_matrix(
    names: Sequence[str] | None = None,
    fixtures: Sequence[Fixture] | None = None,
    jobs: int = 2,
    timeout: float = CASE_TIMEOUT,
) -> KillMatrix:
    """Run the baseline and every mutant (`jobs` SDK processes at a time); the kill matrix."""
    started = time.monotonic()
    selected = list(fixtures) if fixtures is not None else load_fixtures()
    requested = list(names) if names is not None else catalog()
    unapplicable = unapplicable_mutants(requested)
    chosen = [name for name in requested if name not in unapplicable]
    sdks = sorted({sdk_of(name) for name in requested})
    labels = [BASELINES[sdk] for sdk in sdks] + chosen
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = dict(
            zip(labels, pool.map(lambda n: run_mutant(n, selected, timeout), labels), strict=True)
        )
    broken = {sdk: failing_ids(runs[BASELINES[sdk]]) for sdk in sdks}
    kills = {name: sorted(failing_ids(runs[name]) - broken[sdk_of(name)]) for name in chosen}
    return KillMatrix(
        fixtures=sorted(f.id for f in selected),
        baseline_failures={sdk: sorted(failures) for sdk, failures in broken.items()},
        kills=kills,
        seconds=time.monotonic() - started,
        unapplicable=unapplicable,
    )


def render_text(matrix: KillMatrix) -> str:
    """The matrix for a terminal: one line per mutant with its killer count and first killers."""
    fails = ", ".join(f"{sdk} {len(ids)}" for sdk, ids in sorted(matrix.baseline_failures.items()))
    lines = [
        f"{len(matrix.kills)} mutants over {len(matrix.fixtures)} fixtures "
        f"({matrix.seconds:.1f} s; baseline fails: {fails or 'none run'})"
    ]
    width = max((len(name) for name in matrix.kills), default=10)
    for name in in_catalog_order(matrix.kills):
        killers = matrix.kills[name]
        shown = ", ".join(killers[:4]) + (", ..." if len(killers) > 4 else "")
        lines.append(f"  {name:<{width}}  {len(killers):>3}  {shown or 'SURVIVED'}")
    for name, reason in sorted(matrix.unapplicable.items()):
        lines.append(f"  {name:<{width}}  patch does not apply: {reason}")
    lines.append(f"fixtures that kill no mutant: {len(matrix.idle_fixtures())}")
    return "\n".join(lines)


def render_markdown(matrix: KillMatrix) -> str:
    """KILL_MATRIX.md: mutants x killing fixtures, then the fixtures that kill nothing."""
    out = [
        "# Mutant kill matrix",
        "",
        "Generated by `python -m tests.mutants.kill_matrix` (from the repository root); do not",
        "edit by hand. Each mutant is a reference SDK with one fault injected in memory: the",
        "Python SDK by `tests/mutants/mutant_host.py NAME` (catalog: `tests/mutants/patches.py`),",
        "the Node SDK by `node tests/mutants/node_mutant_host.js node:NAME` (catalog:",
        "`tests/mutants/node_mutants.json`). A fixture kills a mutant when it fails or errors",
        "against the mutant and passes against the unpatched baseline of the same SDK (the same",
        "wrapper host with `none`).",
        "",
        f"{len(matrix.kills)} mutants, {len(matrix.fixtures)} fixtures, "
        f"{len(matrix.survivors())} surviving mutants.",
        "",
        "| mutant | SDK | fault | kills | fixtures that caught it |",
        "|---|---|---|---:|---|",
    ]
    for name in in_catalog_order(matrix.kills):
        killers = matrix.kills[name]
        fault = fault_of(name).replace("|", "\\|")
        listed = ", ".join(f"`{k}`" for k in killers) or "**survived**"
        out.append(f"| `{name}` | {sdk_of(name)} | {fault} | {len(killers)} | {listed} |")
    if matrix.unapplicable:
        out += ["", "## Mutants whose patch no longer applies (update its catalog)", ""]
        out += [f"- `{name}`: {reason}" for name, reason in sorted(matrix.unapplicable.items())]
    for sdk, failures in sorted(matrix.baseline_failures.items()):
        if failures:
            out += ["", f"## Fixtures the unpatched {sdk} SDK fails (not counted as kills)", ""]
            out += [f"- `{fixture}`" for fixture in failures]
    idle = matrix.idle_fixtures()
    out += [
        "",
        f"## Fixtures that kill no mutant ({len(idle)})",
        "",
        "Questions worth asking for each: which plausible SDK bug does it catch that no mutant",
        "models (then add that mutant), or does it duplicate another fixture?",
        "",
    ]
    out += [f"- `{fixture}`" for fixture in idle]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutants.kill_matrix",
        description="Run every mutant (both SDKs) against the fixtures and rewrite "
        "KILL_MATRIX.md; with --only or --sdk, check some mutants quickly and write nothing.",
    )
    parser.add_argument(
        "--only",
        metavar="NAME",
        action="append",
        help="Check only this mutant (repeatable): its SDK's baseline and it, nothing written.",
    )
    parser.add_argument(
        "--sdk",
        choices=sorted(BASELINES),
        help="Check only the mutants of this reference SDK, nothing written.",
    )
    parser.add_argument(
        "-k", metavar="TEXT", help="With --only/--sdk: only fixtures whose id contains TEXT."
    )
    parser.add_argument(
        "--fixtures",
        metavar="PATH",
        action="append",
        help="With --only/--sdk: these fixture files or folders (default: the corpus).",
    )
    args = parser.parse_args(argv)
    if args.only is None and args.sdk is None:
        if args.k or args.fixtures:
            parser.error("-k and --fixtures go with --only or --sdk")
        matrix = build_kill_matrix()
        print(render_text(matrix))
        MATRIX_FILE.write_text(render_markdown(matrix), encoding="utf-8")
        print(f"wrote {MATRIX_FILE}")
        return 1 if matrix.survivors() or matrix.unapplicable else 0
    known = catalog()
    unknown = [name for name in args.only or [] if name not in known]
    if unknown:
        parser.error(
            f"unknown mutant(s) {', '.join(unknown)}; `mutant_host.py --help` and "
            "`node tests/mutants/node_mutant_host.js --help` list them"
        )
    names = list(args.only or []) + [n for n in known if args.sdk and sdk_of(n) == args.sdk]
    fixtures = load_fixtures(args.fixtures) if args.fixtures else load_fixtures()
    if args.k:
        fixtures = [fixture for fixture in fixtures if args.k in fixture.id]
    if not fixtures:
        parser.error("no fixture selected")
    matrix = build_kill_matrix(list(dict.fromkeys(names)), fixtures)
    print(render_text(matrix))
    return 1 if matrix.survivors() or matrix.unapplicable else 0


if __name__ == "__main__":
    sys.exit(main())
