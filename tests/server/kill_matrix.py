"""Play the lifecycle corpus against every server mutant and write SERVER_KILL_MATRIX.md.

Why: `tests/mutants/KILL_MATRIX.md` proves each fixture can fail against a faulty *SDK*; this
proves each lifecycle scenario can fail against a faulty *server*, and that every server-side
clause a mutant models is defended by at least two scenarios. The mutants (`mutants.py`) patch the
model server in this process; the scenarios run against the Python reference SDK (its host is a
child process, untouched). A scenario kills a mutant when it fails or errors with the mutant and
passes against the unpatched server.

Regenerate from the repository root with:

    python -m tests.server.kill_matrix            # every mutant, rewrites the file
    python -m tests.server.kill_matrix --only NAME  # one mutant, writes nothing
    python -m tests.server.kill_matrix --sdk runners/node/conform  # the same against Node
    python -m tests.server.kill_matrix --incremental  # only new mutants and new scenarios

The committed file is played with the Python reference SDK; `--sdk` plays the mutants against
another conformance host (the Node reference SDK, or any SDK under test) and, with it, writes
nothing unless `--write` is given, so the committed matrix stays the Python one.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fakepeer.authoring.docs import load_rfd
from fakepeer.cases import Fixture, load_fixtures, repository_root
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.server.rules import RULES
from fakepeer.session import Outcome, SdkRun
from fakepeer.session.targets import command_target
from fakepeer.suite import RunOptions, run_suite

from .mutants import BY_NAME, MUTANTS, apply

HERE = Path(__file__).resolve().parent
MATRIX_FILE = HERE / "SERVER_KILL_MATRIX.md"
SDK = "runners/python/conform"
#: The other reference SDK, which `--sdk` may name (tests/server/test_server_kill_matrix.py).
NODE_SDK = "runners/node/conform"
#: Kills each mutant needs: one scenario could be defending something else by accident.
MIN_KILLS = 2
CASE_TIMEOUT = 20.0
FAILING = (Outcome.FAIL, Outcome.ERROR)
#: RFD 2's other server-side sentences (issue 23's audit of the text): those whose actor is the
#: server, or that fix what the server does with an answer, that the rules table does not quote.
#: With the rules table's, each is shown by a scenario a mutant fails or explained in
#: docs/coverage.md (tests/server/test_server_kill_matrix.py).
AUDITED_SERVER_SENTENCES = (
    13,
    16,
    21,
    22,
    30,
    36,
    40,
    51,
    77,
    83,
    86,
    92,
    96,
    100,
    103,
    106,
    110,
    111,
    113,
    115,
    117,
    118,
    142,
    166,
    167,
)


@dataclass
class ServerKillMatrix:
    scenarios: list[str]
    baseline_failures: list[str]
    kills: dict[str, list[str]]
    seconds: float
    sdk: str = SDK

    def weak(self) -> list[str]:
        """Mutants killed by fewer than MIN_KILLS scenarios."""
        return [name for name, killers in self.kills.items() if len(killers) < MIN_KILLS]

    def idle(self) -> list[str]:
        killing = {ident for killers in self.kills.values() for ident in killers}
        return [ident for ident in self.scenarios if ident not in killing]


def lifecycle_scenarios() -> list[Fixture]:
    return [fixture for fixture in load_fixtures() if fixture.category == "lifecycle"]


def _failing(scenarios: Sequence[Fixture], sdk: str = SDK) -> set[str]:
    path = repository_root() / sdk
    target = command_target(str(path) if path.exists() else sdk)
    run: SdkRun = run_suite(
        [target],
        scenarios,
        RunOptions(timeout=CASE_TIMEOUT, jobs=1, lifecycle_player=play_lifecycle),
    ).sdks[0]
    return {case.id for case in run.results if case.raw_outcome in FAILING}


def build(
    names: Sequence[str] | None = None,
    scenarios: Sequence[Fixture] | None = None,
    sdk: str = SDK,
) -> ServerKillMatrix:
    """The baseline, then each mutant, over the lifecycle scenarios, against `sdk`."""
    started = time.monotonic()
    chosen = list(scenarios) if scenarios is not None else lifecycle_scenarios()
    baseline = _failing(chosen, sdk)
    kills = {}
    for name in names or [mutant.name for mutant in MUTANTS]:
        with apply(name):
            kills[name] = sorted(_failing(chosen, sdk) - baseline)
    return ServerKillMatrix(
        sorted(f.id for f in chosen), sorted(baseline), kills, time.monotonic() - started, sdk
    )


def server_sentences(scenarios: Sequence[Fixture]) -> dict[int, str]:
    """RFD 2's server-side sentences, by number: those the model server's rules table
    (`fakepeer/server/rules.py`) implements and the audited others (AUDITED_SERVER_SENTENCES).
    `scenarios` is unused; kept for the signature."""
    rfd = load_rfd()
    found: dict[int, str] = {}
    for quote in [rule.quote for rule in RULES]:
        for sentence in rfd.sentences_for(quote):
            found[sentence.number] = sentence.text
    for sentence in rfd.sentences:
        if sentence.number in AUDITED_SERVER_SENTENCES:
            found[sentence.number] = sentence.text
    return dict(sorted(found.items()))


def shown_by(matrix: ServerKillMatrix, scenarios: Sequence[Fixture]) -> dict[int, list[str]]:
    """Each server-side sentence -> the scenarios quoting it that kill at least one mutant."""
    rfd = load_rfd()
    killers = {ident for kills in matrix.kills.values() for ident in kills}
    shown: dict[int, list[str]] = {number: [] for number in server_sentences(scenarios)}
    for fixture in scenarios:
        if fixture.id not in killers:
            continue
        for sentence in rfd.sentences_for(fixture.rule.quote):
            if sentence.number in shown:
                shown[sentence.number].append(fixture.id)
    return shown


def render_markdown(matrix: ServerKillMatrix, scenarios: Sequence[Fixture] = ()) -> str:
    out = [
        "# Server mutant kill matrix",
        "",
        "Generated by `python -m tests.server.kill_matrix` (from the repository root); do not edit",
        "by hand. Each mutant is the model server (`fakepeer/server/`) with one fault patched in",
        "(catalog: `tests/server/mutants.py`); the lifecycle scenarios run against it with the",
        f"SDK `{matrix.sdk}`. A scenario kills a mutant when it fails or errors",
        "against the mutant and passes against the unpatched server; every mutant must be killed",
        f"by at least {MIN_KILLS} scenarios.",
        "",
        f"{len(matrix.kills)} mutants, {len(matrix.scenarios)} lifecycle scenarios, "
        f"{len(matrix.weak())} mutants killed by fewer than {MIN_KILLS}.",
        "",
        "| mutant | fault | kills | scenarios that caught it |",
        "|---|---|---:|---|",
    ]
    for name, killers in matrix.kills.items():
        listed = ", ".join(f"`{k}`" for k in killers) or "**survived**"
        fault = BY_NAME[name].fault if name in BY_NAME else ""
        out.append(f"| `{name}` | {fault} | {len(killers)} | {listed} |")
    if matrix.baseline_failures:
        out += ["", "## Scenarios the unpatched server fails (not counted as kills)", ""]
        out += [f"- `{ident}`" for ident in matrix.baseline_failures]
    idle = matrix.idle()
    out += [
        "",
        f"## Scenarios that kill no server mutant ({len(idle)})",
        "",
        "They may still kill SDK mutants (tests/mutants/KILL_MATRIX.md); a server-side clause",
        "they show with no mutant here is a mutant worth adding.",
        "",
    ]
    out += [f"- `{ident}`" for ident in idle]
    if scenarios:
        texts = server_sentences(scenarios)
        shown = shown_by(matrix, scenarios)
        out += [
            "",
            "## Server-side sentences",
            "",
            "RFD 2's sentences the model server implements (`fakepeer/server/rules.py`) and its",
            "other server-side sentences (`AUDITED_SERVER_SENTENCES` in `kill_matrix.py`), and the",
            "lifecycle scenarios quoting each that kill at least one server mutant.",
            "One shown by none is listed in docs/coverage.md with the reason no run observes it.",
            "",
            "| sentence | shown by |",
            "|---|---|",
        ]
        for number, text in texts.items():
            cut = text if len(text) <= 90 else text[:89] + "…"
            listed = ", ".join(f"`{k}`" for k in shown.get(number, [])) or "none"
            out.append(f"| R{number:03d} {cut.replace('|', '/')} | {listed} |")
    out += ["", "## Scenarios", "", *(f"- `{ident}`" for ident in matrix.scenarios)]
    return "\n".join(out) + "\n"


def unshown_sentences() -> list[int]:
    """Server-side sentences SERVER_KILL_MATRIX.md shows by no scenario ("| R… | none |")."""
    text = MATRIX_FILE.read_text(encoding="utf-8") if MATRIX_FILE.is_file() else ""
    return [
        int(line[3:6])
        for line in text.splitlines()
        if line.startswith("| R") and line.rstrip().endswith("| none |")
    ]


def committed_kills() -> dict[str, list[str]]:
    """Each mutant's killing scenarios as SERVER_KILL_MATRIX.md lists them."""
    text = MATRIX_FILE.read_text(encoding="utf-8") if MATRIX_FILE.is_file() else ""
    kills: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            kills[cells[0].strip("`")] = [
                ident.strip().strip("`") for ident in cells[3].split(",") if "`" in ident
            ]
    return kills


def incremental(scenarios: Sequence[Fixture], sdk: str = SDK) -> ServerKillMatrix:
    """The whole matrix from the committed one plus only what is new: mutants the file does
    not list are played over every scenario, the listed ones over the scenarios it does not
    list; the committed cells stand for the rest. Valid while the model server itself is
    unchanged since the file was written (a changed server needs the full run)."""
    started = time.monotonic()
    known_mutants, known_scenarios = committed()
    old_kills = committed_kills()
    fresh = [f for f in scenarios if f.id not in known_scenarios]
    baseline = _failing(fresh, sdk) if fresh else set()
    kills: dict[str, list[str]] = {}
    for mutant in MUTANTS:
        if mutant.name in known_mutants:
            with apply(mutant.name):
                found = _failing(fresh, sdk) - baseline if fresh else set()
            kills[mutant.name] = sorted(set(old_kills.get(mutant.name, [])) | found)
        else:
            matrix = build([mutant.name], scenarios, sdk)
            baseline |= set(matrix.baseline_failures)
            kills[mutant.name] = matrix.kills[mutant.name]
    return ServerKillMatrix(
        sorted(f.id for f in scenarios), sorted(baseline), kills, time.monotonic() - started, sdk
    )


def committed() -> tuple[set[str], set[str]]:
    """(mutant names, scenario ids) SERVER_KILL_MATRIX.md lists."""
    text = MATRIX_FILE.read_text(encoding="utf-8") if MATRIX_FILE.is_file() else ""
    mutants, scenarios = set(), set()
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line
        elif line.startswith("| `"):
            mutants.add(line.split("`")[1])
        elif section == "## Scenarios" and line.startswith("- `"):
            scenarios.add(line.split("`")[1])
    return mutants, scenarios


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.server.kill_matrix",
        description="Play the lifecycle corpus against server mutants; without --only, rewrite "
        "SERVER_KILL_MATRIX.md.",
    )
    parser.add_argument("--only", metavar="NAME", action="append", help="Only this mutant.")
    parser.add_argument("-k", metavar="TEXT", help="With --only: scenarios whose id has TEXT.")
    parser.add_argument(
        "--sdk",
        default=SDK,
        help=f"The conformance host the scenarios run against (default {SDK}; the Node "
        f"reference SDK is {NODE_SDK}).",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="Play only what SERVER_KILL_MATRIX.md lacks (new mutants over every scenario, "
        "the others over new scenarios) and rewrite it; only while the server is unchanged.",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="With --sdk other than the default: rewrite SERVER_KILL_MATRIX.md all the same.",
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.only or [] if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown server mutant {unknown[0]!r}; known: {', '.join(BY_NAME)}")
    if args.k and not args.only:
        parser.error("-k goes with --only")
    scenarios = lifecycle_scenarios()
    if args.k:
        scenarios = [f for f in scenarios if args.k in f.id]
    if args.incremental and (args.only or args.k):
        parser.error("--incremental plays the whole catalog: no --only or -k")
    if args.incremental:
        matrix = incremental(scenarios, args.sdk)
    else:
        matrix = build(args.only, scenarios, args.sdk)
    for name, killers in matrix.kills.items():
        print(f"{name:<40} {len(killers):>3}  {', '.join(killers) or 'SURVIVED'}")
    print(f"{len(matrix.kills)} mutants, {len(matrix.scenarios)} scenarios, {matrix.seconds:.1f} s")
    if matrix.baseline_failures:
        print("baseline fails: " + ", ".join(matrix.baseline_failures))
    if args.only is None and (args.sdk == SDK or args.write):
        MATRIX_FILE.write_text(render_markdown(matrix, scenarios), encoding="utf-8")
        print(f"wrote {MATRIX_FILE}")
    return 1 if matrix.weak() or matrix.baseline_failures else 0


if __name__ == "__main__":
    sys.exit(main())
