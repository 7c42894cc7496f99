"""Run every mutant SDK over the whole fixture corpus and build the kill matrix.

Why: a fixture that catches no plausible bug may be checking nothing; a mutant that no fixture
catches is a hole in the corpus. Mutants come from both reference SDKs: the Python ones of
`patches.py` (`mutant_host.py NAME`) and the `node:` ones of `node_mutants.json`
(`node_mutant_host.js NAME`). A fixture *kills* a mutant when it fails or errors against the
mutant while it passes against the unpatched baseline of the same SDK (the same wrapper host with
`none`), so fixtures a reference SDK itself fails today never count as kills.

A kill must stand on its own and fail a CI gate (issue 20):

- **In isolation.** The whole corpus first runs against each mutant in one shared session (the
  usual run); then each (mutant, fixture) pair that failed there is played again alone, on a
  fresh host process (`run --isolate` on that fixture). Only a fixture that still fails alone is
  a killer; one that failed only after its neighbours is listed apart ("needs neighbours").
- **Through the gate.** A kill is a failure of a required part. A difference that does not fail
  the run (in a `recommended` fixture, with no broken invariant, or only in the recommended parts
  of a `required` fixture's expectation: a pass with a warning) is a warning, not a kill: a
  mutant only such warnings catch *survives the gate* and is reported as surviving.
- **Recommended behaviour only.** A mutant whose catalog entry names a decision under
  `recommended_only` breaks only what the corpus checks at the `recommended` level (the server
  could tolerate either answer, docs/fixtures.md "Levels"). It is by design no gate failure: it
  is reported in a section of its own, and counts as caught when at least two recommended
  fixtures catch it as a warning, alone; with fewer it survives.

Regenerate `tests/mutants/KILL_MATRIX.md` from the repository root with:

    python -m tests.mutants.kill_matrix
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer.cases import Fixture, load_fixtures, repository_root
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import CaseResult, Outcome, SdkRun, SdkTarget
from fakepeer.suite import RunOptions, run_suite
from fakepeer.transport.http import start_command
from fakepeer.transport.process import SubprocessTransport

from .node_mutants import NODE_MUTANTS, NODE_PREFIX, NODE_RECOMMENDED_ONLY, node_host_argv
from .patches import MUTANTS

HERE = Path(__file__).resolve().parent
MUTANT_HOST = HERE / "mutant_host.py"
MATRIX_FILE = HERE / "KILL_MATRIX.md"
BASELINE = "none"
NODE_BASELINE = "node:none"
#: Mutants of the HTTP surface (docs/protocol.md §1.1) are served over HTTP, and held against
#: a baseline served over HTTP too: `http.NAME` (Python), `node:http.NAME` (Node).
HTTP_PREFIX, NODE_HTTP_PREFIX = "http.", "node:http."
HTTP_BASELINE, NODE_HTTP_BASELINE = "http.none", "node:http.none"
#: Each SDK (and transport) with mutants, and the label of its unpatched baseline run.
BASELINES = {
    "python": BASELINE,
    "node": NODE_BASELINE,
    "python-http": HTTP_BASELINE,
    "node-http": NODE_HTTP_BASELINE,
}
#: How many fixtures must catch a mutant, alone: as kills, or as warnings for a mutant that
#: breaks recommended behaviour only.
ENOUGH_CATCHERS = 2
#: Seconds per case: the reference answers in milliseconds; a mutant that hangs costs this much.
CASE_TIMEOUT = 3.0
FAILING = (Outcome.FAIL, Outcome.ERROR)


@dataclass
class KillMatrix:
    """Which fixtures killed which mutant, against which baseline."""

    fixtures: list[str]
    #: SDK ("python", "node") -> fixtures its unpatched baseline fails (never counted as kills).
    baseline_failures: dict[str, list[str]]
    #: Fixtures that fail the run against the mutant alone, on a fresh host (the killers).
    kills: dict[str, list[str]]
    seconds: float
    unapplicable: dict[str, str]
    #: Fixtures that failed against the mutant in the shared session but pass alone.
    needs_neighbours: dict[str, list[str]] = field(default_factory=dict)
    #: Fixtures that fail against the mutant alone only as a warning (recommended, no invariant).
    warnings: dict[str, list[str]] = field(default_factory=dict)
    #: Seconds of the shared-session stage and of the isolation stage, and pairs re-checked.
    stages: dict[str, float] = field(default_factory=dict)
    #: Mutants that break recommended behaviour only -> the decision that makes it recommended.
    recommended_only: dict[str, str] = field(default_factory=dict)

    def caught_as_designed(self, name: str) -> bool:
        """A recommended-only mutant no fixture kills that enough recommended fixtures catch
        as a warning, alone: caught, by design not a gate failure."""
        return (
            name in self.recommended_only
            and not self.kills.get(name)
            and len(self.warnings.get(name, ())) >= ENOUGH_CATCHERS
        )

    def survivors(self) -> list[str]:
        """Mutants no fixture killed (alone, failing the run): they pass a CI gate. A mutant
        that breaks recommended behaviour only is no survivor when it is caught as designed."""
        return [
            name
            for name, killers in self.kills.items()
            if not killers and not self.caught_as_designed(name)
        ]

    def thin(self) -> list[str]:
        """Mutants caught by fewer than two fixtures alone (kills, or designed warnings)."""
        return [
            name
            for name, killers in self.kills.items()
            if len(killers) < ENOUGH_CATCHERS and not self.caught_as_designed(name)
        ]

    def idle_fixtures(self) -> list[str]:
        """Fixtures passing at every baseline that killed no mutant."""
        used = {fixture for killers in self.kills.values() for fixture in killers}
        broken = {fixture for failures in self.baseline_failures.values() for fixture in failures}
        return [f for f in self.fixtures if f not in used and f not in broken]


def catalog() -> list[str]:
    """Every mutant of both SDKs: the Python ones, then the `node:` ones."""
    return in_catalog_order([*MUTANTS, *NODE_MUTANTS])


def sdk_of(name: str) -> str:
    """Which reference SDK a mutant (or baseline) patches, and over which transport:
    "python", "node", or "python-http", "node-http" for the HTTP surface."""
    sdk = "node" if name.startswith(NODE_PREFIX) else "python"
    over_http = name.startswith((HTTP_PREFIX, NODE_HTTP_PREFIX))
    return f"{sdk}-http" if over_http else sdk


def fault_of(name: str) -> str:
    """What the mutant breaks."""
    return NODE_MUTANTS[name] if name.startswith(NODE_PREFIX) else MUTANTS[name].fault


def recommended_only_of(names: Iterable[str]) -> dict[str, str]:
    """The mutants among `names` that break recommended behaviour only, with the decision."""
    found = {}
    for name in names:
        mutant = MUTANTS.get(name)
        if mutant is not None and mutant.recommended_only:
            found[name] = mutant.recommended_only
        elif name in NODE_RECOMMENDED_ONLY:
            found[name] = NODE_RECOMMENDED_ONLY[name]
    return found


def host_argv(name: str) -> list[str]:
    """The wrapper host command of a mutant or of a baseline label."""
    if name.startswith(NODE_PREFIX):
        return node_host_argv("none" if name == NODE_BASELINE else name)
    return [sys.executable, str(MUTANT_HOST), name]


def mutant_target(name: str) -> SdkTarget:
    """A bench target that starts its SDK's wrapper host with one mutant applied (over HTTP,
    as `--sdk http+cmd:` does, for the mutants of the HTTP surface)."""
    argv = host_argv(name)
    root = repository_root()
    if sdk_of(name).endswith("-http"):
        return SdkTarget(label=name, command=argv, factory=lambda: start_command(argv, cwd=root))
    return SdkTarget(label=name, command=argv, factory=lambda: SubprocessTransport(argv, cwd=root))


def run_mutant(
    name: str, fixtures: Sequence[Fixture], timeout: float = CASE_TIMEOUT, isolate: bool = False
) -> SdkRun:
    """One bench run of the selection against one mutant (through the bench's API); `isolate`:
    each case on a fresh host process (for a Python mutant, forked from a zygote)."""
    options = RunOptions(timeout=timeout, jobs=1, isolate=isolate, lifecycle_player=play_lifecycle)
    if not isolate or sdk_of(name) != "python":
        return run_suite([mutant_target(name)], fixtures, options).sdks[0]
    with zygote(name) as argv:
        root = repository_root()
        target = SdkTarget(name, argv, lambda: SubprocessTransport(argv, cwd=root))
        return run_suite([target], fixtures, options).sdks[0]


@contextmanager
def zygote(name: str) -> Iterator[list[str]]:
    """A Python mutant host that forks a fresh host per client; the client's command line.

    A fork of a host that made its imports and served nothing is as fresh as a new process and
    costs milliseconds instead of a quarter second (`zygote_client.py`)."""
    with tempfile.TemporaryDirectory(prefix="ryusen-zygote-") as folder:
        path = str(Path(folder) / "host.sock")
        process = subprocess.Popen(
            [sys.executable, str(MUTANT_HOST), "--zygote", name, path],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the zygote of mutant {name!r} did not start")
            yield [sys.executable, "-S", str(HERE / "zygote_client.py"), path]
        finally:
            process.terminate()
            process.wait(timeout=30)


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
    return sorted(names, key=lambda name: (name.startswith(NODE_PREFIX), name))


def failing_ids(run: SdkRun) -> set[str]:
    """Cases that fail, error, or pass with differences in recommended parts (warnings)."""
    return {case.id for case in run.results if case.raw_outcome in FAILING or warned(case)}


def warned(case: CaseResult) -> bool:
    """A pass whose differences all lie in recommended parts (docs/fixtures.md "Levels inside a
    fixture"): it catches a mutant as a warning, never as a kill."""
    return case.raw_outcome is Outcome.PASS and any(f.recommended for f in case.findings)


def gate_failing_ids(run: SdkRun) -> set[str]:
    """Failing cases that fail the run (not `--strict`): required ones, and recommended ones
    that broke an invariant."""
    return {
        case.id for case in run.results if case.raw_outcome in FAILING and case.fails_run(False)
    }


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
    # the HTTP surface's mutants change only the HTTP layer: they (and their baseline) play the
    # fixtures of the HTTP mapping, not the whole corpus again over HTTP (minutes of CPU each)
    over_http = [fixture for fixture in selected if "http" in fixture.capabilities]

    def play(name: str) -> SdkRun:
        chosen_fixtures = over_http if sdk_of(name).endswith("-http") else selected
        return run_mutant(name, chosen_fixtures, timeout)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = dict(zip(labels, pool.map(play, labels), strict=True))
    shared_done = time.monotonic()
    broken = {sdk: failing_ids(runs[BASELINES[sdk]]) for sdk in sdks}
    shared = {name: sorted(failing_ids(runs[name]) - broken[sdk_of(name)]) for name in chosen}
    by_id = {fixture.id: fixture for fixture in selected}

    def alone(name: str) -> SdkRun:
        """The mutant's shared-session killers again, each alone on a fresh host."""
        return run_mutant(name, [by_id[i] for i in shared[name]], timeout, isolate=True)

    rechecked = [name for name in chosen if shared[name]]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        isolated = dict(zip(rechecked, pool.map(alone, rechecked), strict=True))
    kills, neighbours, warnings = {}, {}, {}
    for name in chosen:
        run = isolated.get(name)
        alone_failing = failing_ids(run) if run is not None else set()
        gate = gate_failing_ids(run) if run is not None else set()
        kills[name] = sorted(gate)
        warnings[name] = sorted(alone_failing - gate)
        neighbours[name] = sorted(set(shared[name]) - alone_failing)
    finished = time.monotonic()
    return KillMatrix(
        fixtures=sorted(f.id for f in selected),
        baseline_failures={sdk: sorted(failures) for sdk, failures in broken.items()},
        kills=kills,
        seconds=finished - started,
        unapplicable=unapplicable,
        needs_neighbours=neighbours,
        warnings=warnings,
        recommended_only=recommended_only_of(chosen),
        stages={
            "shared_seconds": shared_done - started,
            "isolation_seconds": finished - shared_done,
            "pairs_rechecked": float(sum(len(shared[name]) for name in chosen)),
        },
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
        apart = _apart(matrix, name)
        if matrix.caught_as_designed(name):
            shown = f"recommended only ({matrix.recommended_only[name]}): " + _as_designed(
                matrix, name
            )
        lines.append(f"  {name:<{width}}  {len(killers):>3}  {shown or 'SURVIVED'}{apart}")
    for name, reason in sorted(matrix.unapplicable.items()):
        lines.append(f"  {name:<{width}}  patch does not apply: {reason}")
    lines.append(f"fixtures that kill no mutant: {len(matrix.idle_fixtures())}")
    lines.append(_timing(matrix))
    return "\n".join(lines)


def _as_designed(matrix: KillMatrix, name: str) -> str:
    count = len(matrix.warnings.get(name, ()))
    return f"caught as a warning by {count} fixtures, by design not a gate failure"


def _apart(matrix: KillMatrix, name: str) -> str:
    """` (needs neighbours: 2; warnings only: 1)`: what failed but is no kill."""
    parts = []
    if matrix.needs_neighbours.get(name):
        parts.append(f"needs neighbours: {len(matrix.needs_neighbours[name])}")
    if matrix.warnings.get(name):
        parts.append(f"warnings only: {len(matrix.warnings[name])}")
    return f" ({'; '.join(parts)})" if parts else ""


def _timing(matrix: KillMatrix) -> str:
    stages = matrix.stages
    if not stages:
        return f"built in {matrix.seconds:.0f} s"
    return (
        f"built in {matrix.seconds:.0f} s: shared sessions {stages['shared_seconds']:.0f} s, "
        f"then {stages['pairs_rechecked']:.0f} (mutant, fixture) pairs alone on a fresh host "
        f"{stages['isolation_seconds']:.0f} s"
    )


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
        "against the mutant **alone, on a fresh host process**, in a way that **fails the run**",
        "(a required fixture, or a broken invariant in a recommended one), and passes against the",
        "unpatched baseline of the same SDK (the same wrapper host with `none`). The corpus first",
        "runs against each mutant in one shared session; each fixture that failed there is then",
        "played alone; one that failed only after its neighbours, or only as a warning, is listed",
        "apart and is no kill. A mutant no fixture kills so survives a CI gate, except one whose",
        "catalog entry says it breaks recommended behaviour only (a decision where the server",
        "could tolerate either answer): it is listed in a section of its own and counts as caught",
        "when at least two recommended fixtures catch it as a warning, alone.",
        "",
        f"{len(matrix.kills)} mutants, {len(matrix.fixtures)} fixtures, "
        f"{len(matrix.survivors())} surviving mutants; "
        f"{len(matrix.thin())} caught by fewer than two fixtures in isolation; "
        f"{sum(1 for name in matrix.kills if matrix.caught_as_designed(name))} "
        "fault(s) in recommended behaviour only, caught as warnings by design.",
        "",
        f"Regeneration: {_timing(matrix)} (2 jobs).",
        "",
        "| mutant | SDK | fault | kills | fixtures that caught it (alone, failing the run) |",
        "|---|---|---|---:|---|",
    ]
    for name in in_catalog_order(matrix.kills):
        killers = matrix.kills[name]
        fault = fault_of(name).replace("|", "\\|")
        listed = ", ".join(f"`{k}`" for k in killers) or "**survived**"
        if matrix.caught_as_designed(name):
            listed = "recommended behaviour only: see below"
        out.append(f"| `{name}` | {sdk_of(name)} | {fault} | {len(killers)} | {listed} |")
    designed = [name for name in in_catalog_order(matrix.kills) if name in matrix.recommended_only]
    if designed:
        out += [
            "",
            "## Faults in recommended behaviour only",
            "",
            "Each breaks only what the corpus checks at the `recommended` level, for the decision",
            'named (the server could tolerate either answer; docs/fixtures.md "Levels"), so no',
            "fixture fails the run against it: it needs at least two recommended fixtures that",
            "catch it as a warning, alone, or it is counted as surviving.",
            "",
            "| mutant | decision | verdict | fixtures that caught it (alone, as a warning) |",
            "|---|---|---|---|",
        ]
        for name in designed:
            if matrix.caught_as_designed(name):
                verdict = "fault in recommended behaviour only: " + _as_designed(matrix, name)
            elif matrix.kills.get(name):
                verdict = "killed by a required fixture: remove `recommended_only` from its entry"
            else:
                verdict = "**survived**: fewer than two recommended fixtures catch it"
            warned = ", ".join(f"`{k}`" for k in matrix.warnings.get(name, ())) or "-"
            decision = matrix.recommended_only[name]
            out.append(f"| `{name}` | {decision} | {verdict} | {warned} |")
    apart = [name for name in in_catalog_order(matrix.kills) if _apart(matrix, name)]
    if apart:
        out += [
            "",
            "## Failures that are no kill",
            "",
            "Fixtures that failed against a mutant only after other cases in the same host",
            "process (needs neighbours), or alone but only as a warning (a recommended fixture's",
            "own expectation, no broken invariant).",
            "",
            "| mutant | needs neighbours | warnings only |",
            "|---|---|---|",
        ]
        for name in apart:
            needs = ", ".join(f"`{k}`" for k in matrix.needs_neighbours.get(name, ())) or "-"
            warned = ", ".join(f"`{k}`" for k in matrix.warnings.get(name, ())) or "-"
            out.append(f"| `{name}` | {needs} | {warned} |")
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
