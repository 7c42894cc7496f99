"""Prove new or changed fixtures: both reference SDKs pass them, then which mutants they kill.

Why: after writing a fixture a protocol author needs three things (issue 22 item 12): both
reference SDKs pass it, it can fail (a mutant kills it), and the kill matrix says so. Regenerating
`KILL_MATRIX.md` in full costs 25 minutes of CPU for a change that can alter only the cells of the
fixtures named; this plays those fixtures alone against every mutant row of the matrix, judged by
`kill_matrix.build_kill_matrix` itself (the same shared session and isolation phases, the same
baselines; only the fixtures differ), and rewrites the file incrementally through
`kill_matrix.render_markdown`, so the result is what a full regeneration writes for those cells.

    python -m tests.mutants.prove ID [ID ...]      # `ryusen-conform fixtures prove` runs this

Steps, stopping at the first that fails, with one line saying why (exit 1; 2 for bad input):
validate the fixtures, run them on both reference SDKs (over HTTP too for an `http` fixture),
play them against every mutant, update KILL_MATRIX.md and matrix.json, print a summary.

What an incremental update cannot know: whether a named fixture fails a mutant only after
*other* corpus fixtures in the same host process ("needs neighbours"): a full regeneration finds
those; the named fixtures' old entries there stay, unless the fixture now fails alone. Mutants
added to a catalog since the last full regeneration have no row yet (a full regeneration adds
them; `python -m tests.mutants.kill_matrix --only NAME -k ID` checks one).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import atomic
from fakepeer.authoring.validate import validate_paths
from fakepeer.cases import Fixture, FixtureError, fixture_files, load_fixtures, repository_root
from fakepeer.server.lifecycle import play_lifecycle
from fakepeer.session import Outcome, SdkTarget, targets_from_options
from fakepeer.suite import RunOptions, run_suite
from fakepeer.suite.known_failures import finding_of

from . import kill_matrix as km

#: The reference SDKs a fixture must pass, framed, and over HTTP for an `http` fixture.
REFERENCE_SDKS = ("runners/python/conform", "runners/node/conform")
HTTP_REFERENCE_SDKS = tuple(f"http+cmd:{sdk} --http" for sdk in REFERENCE_SDKS)
REGENERATE = "regenerate it in full (python -m tests.mutants.kill_matrix)"
IDLE_ADVICE = (
    "every fixture must be able to fail: add a mutant it kills, see tests/mutants/README.md"
)


class ProveError(Exception):
    """A step failed: one line for the user, and the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# ----------------------------------------------------------------------------- reading the file


@dataclass
class Parsed:
    """KILL_MATRIX.md read back: the matrix it renders, and its regeneration-timing line."""

    matrix: km.KillMatrix
    timing_line: str
    #: Mutant rows whose mutant is no longer in a catalog (a full regeneration drops them).
    gone: list[str] = field(default_factory=list)


_ROW = re.compile(r"^\| `([^`]+)` \| ")
_HEADER = re.compile(r"^(\d+) mutants, (\d+) fixtures, ")


def _ids(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def parse_markdown(text: str) -> Parsed:
    """The matrix KILL_MATRIX.md renders (as `kill_matrix.render_markdown` writes it).

    Every fixture of the corpus the file was built from appears in it: as a killer, as a
    fixture a baseline fails, or among those that kill no mutant."""
    kills: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    neighbours: dict[str, list[str]] = {}
    broken: dict[str, list[str]] = {}
    unapplicable: dict[str, str] = {}
    idle: list[str] = []
    timing, header, section = "", None, "main"
    for line in text.splitlines():
        if line.startswith("Regeneration: "):
            timing = line
        elif header is None and _HEADER.match(line):
            header = _HEADER.match(line)
        elif line.startswith("## "):
            section = line
        elif section == "main" and _ROW.match(line):
            name = _ROW.match(line).group(1)  # type: ignore[union-attr]
            _prefix, count, killers = line[: -len(" |")].rsplit(" | ", 2)
            kills[name] = [] if killers.startswith("recommended behaviour") else _ids(killers)
            if count != str(len(kills[name])):
                raise ProveError(
                    f"KILL_MATRIX.md: the row of {name} counts {count} kills but lists "
                    f"{len(kills[name])}; {REGENERATE}",
                    2,
                )
        elif section.startswith("## Failures that are no kill") and _ROW.match(line):
            cells = line[: -len(" |")].split(" | ")
            name = _ids(cells[0])[0]
            for table, cell in ((neighbours, cells[1]), (warnings, cells[2])):
                if _ids(cell):
                    table[name] = _ids(cell)
        elif section.startswith("## Mutants whose patch") and line.startswith("- `"):
            name, _, reason = line[len("- `") :].partition("`: ")
            unapplicable[name] = reason
        elif section.startswith("## Fixtures the unpatched ") and line.startswith("- `"):
            sdk = section[len("## Fixtures the unpatched ") :].split(" SDK fails")[0]
            broken.setdefault(sdk, []).extend(_ids(line))
        elif section.startswith("## Fixtures that kill no mutant") and line.startswith("- `"):
            idle.extend(_ids(line))
    if not kills or header is None or not timing:
        raise ProveError(
            "KILL_MATRIX.md: cannot read its mutant table, header or regeneration line; "
            + REGENERATE,
            2,
        )
    fixtures = set(idle) | {f for ids in kills.values() for f in ids}
    fixtures |= {f for ids in broken.values() for f in ids}
    if len(fixtures) != int(header.group(2)):
        raise ProveError(
            f"KILL_MATRIX.md: its header counts {header.group(2)} fixtures but its lists name "
            f"{len(fixtures)}; {REGENERATE}",
            2,
        )
    known = set(km.catalog())
    gone = [name for name in kills if name not in known]
    for name in gone:
        for table in (kills, warnings, neighbours):
            table.pop(name, None)
    matrix = km.KillMatrix(
        fixtures=sorted(fixtures),
        baseline_failures=broken,
        kills=kills,
        seconds=0.0,
        unapplicable=unapplicable,
        needs_neighbours=neighbours,
        warnings=warnings,
        recommended_only=km.recommended_only_of(kills),
    )
    return Parsed(matrix, timing, gone)


def render(parsed: Parsed) -> str:
    """KILL_MATRIX.md for `parsed`, its regeneration-timing line kept as it was."""
    lines = km.render_markdown(parsed.matrix).split("\n")
    return "\n".join(parsed.timing_line if ln.startswith("Regeneration: ") else ln for ln in lines)


# ----------------------------------------------------------------------------- the update


def merge(parsed: Parsed, proof: km.KillMatrix, ids: Sequence[str]) -> None:
    """Replace the cells of fixtures `ids` by what `proof` (the matrix of those fixtures alone,
    over the mutants it played) found; every other cell stays as it was."""
    matrix, named = parsed.matrix, set(ids)
    matrix.fixtures = sorted(set(matrix.fixtures) | named)
    for name in proof.unapplicable:
        matrix.unapplicable[name] = proof.unapplicable[name]
        for table in (matrix.kills, matrix.warnings, matrix.needs_neighbours):
            table.pop(name, None)
    for name, killers in proof.kills.items():
        if name not in matrix.kills:
            continue  # a row only a full regeneration (over the whole corpus) can write
        warned = proof.warnings.get(name, [])
        _replace(matrix.kills, name, named, killers, keep_row=True)
        _replace(matrix.warnings, name, named, warned)
        # "needs neighbours" takes the whole corpus as neighbours: only a full regeneration
        # finds it, so an old entry stays unless the fixture now fails alone (a proof's own
        # is no evidence: its session held only the named fixtures)
        _replace(matrix.needs_neighbours, name, {*killers, *warned}, [])
    for sdk, failures in proof.baseline_failures.items():
        kept = [f for f in matrix.baseline_failures.get(sdk, []) if f not in named]
        matrix.baseline_failures[sdk] = sorted({*kept, *failures})
    matrix.recommended_only = km.recommended_only_of(matrix.kills)


def _replace(
    table: dict[str, list[str]],
    name: str,
    drop: set[str],
    found: Sequence[str],
    keep_row: bool = False,
) -> None:
    """Mutant `name`'s cell of `table` without the fixtures `drop`, with those `found`."""
    merged = sorted({*(f for f in table.get(name, []) if f not in drop), *found})
    if merged or keep_row:
        table[name] = merged
    else:
        table.pop(name, None)


# ----------------------------------------------------------------------------- the steps


def find_fixtures(ids: Sequence[str]) -> tuple[list[Path], list[Fixture]]:
    """The corpus files of `ids` (by file name, as `run -k` finds them) and their fixtures."""
    files = {path.stem: path for path in fixture_files([repository_root() / "fixtures"])}
    unknown = [ident for ident in ids if ident not in files]
    if unknown:
        raise ProveError(f"{unknown[0]} is no fixture of {repository_root() / 'fixtures'}", 2)
    chosen = [files[ident] for ident in ids]
    try:
        return chosen, load_fixtures(chosen)
    except FixtureError as exc:
        raise ProveError(str(exc.problems[0]), 2) from None


def validate(files: Sequence[Path]) -> None:
    """Step 1a: `fixtures validate` on the named files."""
    _count, problems = validate_paths(files)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ProveError(f"fixtures validate: {problems[0]}{more}", 2)


def reference_targets(fixtures: Sequence[Fixture]) -> list[SdkTarget]:
    """Both reference SDKs, and both over HTTP when a fixture lists the `http` capability."""
    root = repository_root()
    sdks = [str(root / sdk) for sdk in REFERENCE_SDKS]
    if any("http" in fixture.capabilities for fixture in fixtures):
        sdks += [f"http+cmd:{root / sdk.removeprefix('http+cmd:')}" for sdk in HTTP_REFERENCE_SDKS]
    return targets_from_options(sdks)


def check_reference(fixtures: Sequence[Fixture], timeout: float) -> None:
    """Step 1b: every fixture passes on both reference SDKs (an `http` fixture over HTTP; a
    framed transport skips it, with the reason)."""
    result = run_suite(
        reference_targets(fixtures),
        list(fixtures),
        RunOptions(timeout=timeout, lifecycle_player=play_lifecycle),
    )
    by_id = {fixture.id: fixture for fixture in fixtures}
    for run in result.sdks:
        framed = not run.label.startswith("http+cmd:")
        for case in run.results:
            skipped_framed = framed and "http" in by_id[case.id].capabilities
            if case.outcome == Outcome.PASS or (skipped_framed and case.outcome == Outcome.SKIP):
                continue
            reason = finding_of(case) if case.outcome != Outcome.SKIP else case.reason
            raise ProveError(f"{case.id} does not pass on {run.label}: {case.outcome}: {reason}")


def add_rows(
    parsed: Parsed, names: Sequence[str], jobs: int, timeout: float
) -> km.KillMatrix | None:
    """Play each mutant of `names` against the whole corpus and write its row into `parsed`:
    what a full regeneration writes for it (its kills, warnings and needs-neighbours over every
    fixture), the other rows untouched. None when there is nothing to play."""
    if not names:
        return None
    whole = km.build_kill_matrix(names, load_fixtures(), jobs=jobs, timeout=timeout)
    matrix = parsed.matrix
    matrix.fixtures = sorted(set(matrix.fixtures) | set(whole.fixtures))
    matrix.unapplicable.update(whole.unapplicable)
    for name in whole.kills:
        matrix.kills[name] = whole.kills[name]
        for table, found in (
            (matrix.warnings, whole.warnings.get(name, [])),
            (matrix.needs_neighbours, whole.needs_neighbours.get(name, [])),
        ):
            if found:
                table[name] = found
            else:
                table.pop(name, None)
    for sdk, failures in whole.baseline_failures.items():
        # kept with the file's own: one run's flake is no evidence a listed failure is gone
        matrix.baseline_failures[sdk] = sorted({*matrix.baseline_failures.get(sdk, []), *failures})
    matrix.recommended_only = km.recommended_only_of(matrix.kills)
    return whole


def prove(
    ids: Sequence[str],
    matrix_file: Path,
    mutants: Sequence[str] | None = None,
    jobs: int = 2,
    timeout: float = km.CASE_TIMEOUT,
    write_index: bool = True,
    new_rows: bool = False,
) -> int:
    """The whole command; returns the exit status. `new_rows`: first give every chosen mutant
    without a row its row over the whole corpus (`add_rows`)."""
    started = time.monotonic()
    ids = list(dict.fromkeys(ids))
    files, fixtures = find_fixtures(ids)
    try:
        parsed = parse_markdown(atomic.read_text(matrix_file))  # a FIFO must not block
    except (OSError, UnicodeDecodeError) as exc:
        raise ProveError(f"cannot read {matrix_file}: {exc}", 2) from None
    known = km.catalog()
    chosen = known
    if mutants is not None:
        unknown = [name for name in mutants if name not in known]
        if unknown:
            raise ProveError(f"--mutant {unknown[0]}: no mutant of either catalog", 2)
        chosen = [name for name in known if name in mutants]
    validate(files)
    check_reference(fixtures, timeout=10.0)
    print(f"passes: {', '.join(ids)} on both reference SDKs ({time.monotonic() - started:.0f} s)")
    # the mutants of the HTTP surface play only fixtures of the HTTP mapping (as the matrix)
    if not any("http" in fixture.capabilities for fixture in fixtures):
        chosen = [name for name in chosen if not km.sdk_of(name).endswith("-http")]
    added: km.KillMatrix | None = None
    if new_rows:
        rowless = [n for n in chosen if n not in parsed.matrix.kills]
        rowless = [n for n in rowless if n not in parsed.matrix.unapplicable]
        print(f"playing {len(rowless)} mutant(s) without a row against the whole corpus ...")
        added = add_rows(parsed, rowless, jobs, timeout)
        chosen = [name for name in chosen if name not in rowless]  # their rows hold the ids too
    print(f"playing them against {len(chosen)} mutant(s), {jobs} at a time ...", flush=True)
    played = time.monotonic()
    proof = km.build_kill_matrix(chosen, fixtures, jobs=jobs, timeout=timeout)
    if added is not None:  # the summary names their kills of the named fixtures as well
        named = set(ids)
        for name in added.kills:
            proof.kills[name] = [f for f in added.kills[name] if f in named]
            proof.warnings[name] = [f for f in added.warnings.get(name, []) if f in named]
    print(
        f"played {len(ids)} fixture(s) against {len(proof.kills)} mutant(s) "
        f"({time.monotonic() - played:.0f} s)"
    )
    rowless = [name for name in proof.kills if name not in parsed.matrix.kills]
    unsteady = sorted(name for name, found in proof.needs_neighbours.items() if found)
    if unsteady:
        print(
            f"note: {len(unsteady)} mutant(s) failed a fixture in a first session but not alone "
            f"({', '.join(unsteady[:3])}{', ...' if len(unsteady) > 3 else ''}): no kill "
            "(a slow host start under load?)"
        )
    merge(parsed, proof, ids)
    try:
        atomic.write_text(matrix_file, render(parsed))
    except OSError as exc:
        raise ProveError(f"cannot write {matrix_file}: {exc}", 2) from None
    print(
        f"updated {matrix_file} incrementally (the cells of {', '.join(ids)}; its regeneration "
        "line is unchanged)"
    )
    for name in parsed.gone:
        print(f"note: dropped the row of {name}, no longer in a mutant catalog")
    if rowless:
        print(
            f"note: {len(rowless)} mutant(s) have no row in {matrix_file.name} yet "
            f"({', '.join(rowless[:3])}{', ...' if len(rowless) > 3 else ''}): their kills are "
            "in the summary below; a full regeneration adds their rows"
        )
    if write_index:
        done = subprocess.run(
            [sys.executable, "-m", "fakepeer", "matrix"],
            cwd=repository_root(),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines() or ["(no output)"]
            raise ProveError(f"ryusen-conform matrix: {lines[-1]}")
        print(done.stdout.strip())
    return summarize(ids, proof, time.monotonic() - started)


def summarize(ids: Sequence[str], proof: km.KillMatrix, seconds: float) -> int:
    """Step 4: per fixture, what it kills; a warning for one that kills nothing."""
    for ident in ids:
        killed = [name for name in km.in_catalog_order(proof.kills) if ident in proof.kills[name]]
        broken = [sdk for sdk, ids_ in proof.baseline_failures.items() if ident in ids_]
        shown = ", ".join(killed[:6]) + (", ..." if len(killed) > 6 else "")
        print(
            f"{ident}: passes on both SDKs; kills {len(killed)} mutant(s){': ' if killed else ''}"
            f"{shown}"
        )
        if broken:
            print(f"warning: {ident} fails the unpatched wrapper host of {', '.join(broken)}")
        if not killed:
            print(f"warning: {ident} kills no mutant: {IDLE_ADVICE}")
    print(f"proved {len(ids)} fixture(s) in {seconds:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ryusen-conform fixtures prove",
        description="Prove fixtures: validate them, run them on both reference SDKs, play them "
        "against every mutant of the kill matrix, and update KILL_MATRIX.md (incrementally) "
        "and matrix.json.",
    )
    parser.add_argument("ids", nargs="+", metavar="ID", help="Fixture ids of the corpus.")
    parser.add_argument(
        "--mutant",
        action="append",
        metavar="NAME",
        help="Play only this mutant (repeatable; default: every mutant of both catalogs).",
    )
    parser.add_argument(
        "--kill-matrix",
        type=Path,
        default=km.MATRIX_FILE,
        metavar="FILE",
        help="The kill matrix to update (default: tests/mutants/KILL_MATRIX.md).",
    )
    parser.add_argument(
        "--no-matrix-json", action="store_true", help="Do not regenerate matrix.json."
    )
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="Mutant hosts at a time.")
    parser.add_argument(
        "--new-rows",
        action="store_true",
        help="First play every mutant that has no row yet (new to a catalog) against the whole "
        "corpus and write its row, as a full regeneration would.",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs takes a number of at least 1")
    try:
        return prove(
            args.ids,
            args.kill_matrix,
            mutants=args.mutant,
            jobs=args.jobs,
            write_index=not args.no_matrix_json,
            new_rows=args.new_rows,
        )
    except ProveError as exc:
        print(f"ryusen-conform fixtures prove: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        print("ryusen-conform fixtures prove: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
