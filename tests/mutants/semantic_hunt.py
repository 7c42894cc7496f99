"""The semantic fuzzer against the mutant catalogue, with no fixtures: which mutants it finds and
after how many examples. `python -m tests.mutants.semantic_hunt [--examples N] [--seed S]
[--per-mutant SECONDS] [--budget SECONDS] [--jobs N] [--out FILE] [NAME ...]`.

A mutant counts as *reachable* when a corpus fixture made only of what the fuzzer sends kills it
(KILL_MATRIX.md names the killers): every send of that fixture is an invoke the oracle models or
a `conform.reset` / `set_ambient` / `set_admission`, so the fault shows on cases of the kind
`fuzz --semantics` plays. The rest (value codec edges, envelopes, registration, manifests,
lifecycle runs) are out of its reach by design. `--from-table FILE` re-renders an earlier table.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import time
from pathlib import Path

from fakepeer.cases import load_fixtures, repository_root
from fakepeer.fuzz.semantic_campaign import SemanticSetupError, run_semantic_campaign
from tests.mutants.kill_matrix import catalog, fault_of, mutant_target, sdk_of

HERE = Path(__file__).resolve().parent
KILLS_ROW = re.compile(r"^\| `([^`]+)` \| \w+ \| .*? \| \d+ \| (.*) \|$")


def killers() -> dict[str, set[str]]:
    """Mutant -> the fixtures that kill it, read from KILL_MATRIX.md."""
    found: dict[str, set[str]] = {}
    for line in (HERE / "KILL_MATRIX.md").read_text(encoding="utf-8").splitlines():
        match = KILLS_ROW.match(line)
        if match:
            found[match.group(1)] = set(re.findall(r"`([^`]+)`", match.group(2)))
    return found


CONTROLS = {
    "conform.reset": lambda body: body == {},
    "conform.set_ambient": lambda body: (
        set(body) == {"key", "value"} and all(isinstance(v, str) for v in body.values())
    ),
    "conform.set_admission": lambda body: set(body) == {"open"} and isinstance(body["open"], bool),
}


def _plain_send(fixture_id: str, step: object) -> bool:
    envelope = getattr(step, "envelope", None)
    if not isinstance(envelope, dict) or set(envelope) != {"version", "kind", "id", "body"}:
        return False  # a raw frame, or extra envelope members
    ident = getattr(step, "exchange_id", "")
    if envelope["version"] != "1.0" or not re.fullmatch(re.escape(fixture_id) + r"#\d+", ident):
        return False  # a chosen version or request id: the envelope fixtures' business
    kind, body = envelope["kind"], envelope["body"]
    return kind == "invoke" or (kind in CONTROLS and CONTROLS[kind](body))


def pure_fixtures() -> set[str]:
    """Fixtures made only of what `fuzz --semantics` sends: plain sends of modelled invokes
    and well-formed host-state controls."""
    from fakepeer.authoring.oracle_check import OracleCheck, check_fixture

    pure = set()
    for fixture in load_fixtures([repository_root() / "fixtures"]):
        if fixture.lifecycle is not None:
            continue
        sends = [step for step in fixture.steps if not hasattr(step, "kind")]
        if not sends or not all(_plain_send(fixture.id, step) for step in sends):
            continue
        invokes = sum(step.envelope["kind"] == "invoke" for step in sends)
        result = OracleCheck()
        check_fixture(fixture, result)
        if invokes and result.modelled == invokes and not result.problems:
            pure.add(fixture.id)
    return pure


def out_of_reach_by_design(name: str) -> bool:
    """HTTP transport mutants: the fuzzer speaks stdio (docs/protocol.md §1.1 is another pipe)."""
    return name.removeprefix("node:").startswith("http.")


def rows_from_table(path: Path) -> list[dict]:
    """The rows of a table this script wrote (to re-render it with today's reachability)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if len(cells) == 7 and cells[0].startswith("`"):
            name, _, _, verdict, after, seconds, why = cells
            row = {"name": name.strip("`"), "seconds": float(seconds)}
            if verdict == "error":
                row["error"] = why
            else:
                row.update(found=verdict == "yes", after=int(after), problem=why,
                           timed_out=why.startswith("time bound"))  # fmt: skip
            rows.append(row)
    return rows


def hunt_one(args: tuple[str, int, int, float]) -> dict:
    """One campaign (no shrinking) against one mutant."""
    name, examples, seed, per_mutant = args
    started = time.monotonic()
    try:
        result = run_semantic_campaign(
            mutant_target(name), examples=examples, seed=seed, shrink=False,
            max_time=per_mutant or None,
        )  # fmt: skip
    except SemanticSetupError as exc:
        return {"name": name, "error": str(exc)[:200], "seconds": time.monotonic() - started}
    except Exception as exc:  # noqa: BLE001 - one mutant's trouble must not end the campaign
        message = f"{type(exc).__name__}: {str(exc)[:160]}"
        return {"name": name, "error": message, "seconds": time.monotonic() - started}
    failure = result.failure
    return {
        "name": name,
        "found": failure is not None,
        "after": failure.found_after if failure else result.played,
        "timed_out": result.timed_out,
        "seconds": result.seconds,
        "problem": failure.problem if failure else "",
    }


def render(rows: list[dict], reachable: set[str], examples: int, seed: int, note: str) -> str:
    """The Markdown table and its totals."""
    reach_rows = [r for r in rows if r["name"] in reachable]
    found_reach = [r for r in reach_rows if r.get("found")]
    found_other = [r for r in rows if r["name"] not in reachable and r.get("found")]
    lines = [
        "# The semantic fuzzer against the mutant catalogue",
        "",
        "Generated by `python -m tests.mutants.semantic_hunt`; do not edit by hand. Each mutant "
        f"got up to {examples} examples of `fuzz --semantics` (seed {seed}, no shrinking, no "
        "fixtures). *reachable*: a corpus fixture made only of plain modelled invokes and "
        "host-state controls kills it (HTTP transport mutants are out of reach). " + note,
        "",
        f"Reachable: found {len(found_reach)} of {len(reach_rows)} run "
        f"({100 * len(found_reach) / max(len(reach_rows), 1):.0f}%). Out of reach: found "
        f"{len(found_other)} of {len(rows) - len(reach_rows)} run anyway.",
        "",
        "| mutant | SDK | reachable | found | examples | seconds | first difference / why not |",
        "|---|---|---|---|---:|---:|---|",
    ]
    for row in rows:
        name = row["name"]
        if "error" in row:
            verdict, why = "error", row["error"]
        elif row["found"]:
            verdict, why = "yes", row["problem"]
        elif row["problem"].startswith(("time bound", "not found")):
            verdict, why = "no", row["problem"]
        else:
            verdict = "no"
            why = "time bound reached" if row["timed_out"] else "not found in the examples"
            why = f"{why}; fault: {fault_of(name)}"
        why = why.replace("|", "\\|").replace("\n", " ")[:220]
        lines.append(
            f"| `{name}` | {sdk_of(name)} | {'yes' if name in reachable else 'no'} | {verdict} | "
            f"{row.get('after', '')} | {row['seconds']:.1f} | {why} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="mutants to hunt (default: all)")
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument(
        "--per-mutant", type=float, default=60.0, help="seconds per mutant (0: no bound)"
    )
    parser.add_argument(
        "--reachable-only", action="store_true", help="hunt only the mutants it can reach"
    )
    parser.add_argument("--budget", type=float, default=None, help="seconds for the campaign")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "SEMANTIC_HUNT.md")
    parser.add_argument("--from-table", type=Path, default=None)
    parser.add_argument("--note", default="")
    options = parser.parse_args(argv)
    kills = killers()  # a mutant newer than KILL_MATRIX.md counts as reachable (against us)
    pure = pure_fixtures()
    reachable = {
        name
        for name in catalog()
        if not out_of_reach_by_design(name) and (name not in kills or kills[name] & pure)
    }
    if options.from_table is not None:
        rows = rows_from_table(options.from_table)
        text = render(rows, reachable, options.examples, options.seed, options.note)
        options.out.write_text(text, "utf-8")
        print(f"wrote {options.out}")
        return 0
    names = options.names or catalog()
    if options.reachable_only:
        names = [name for name in names if name in reachable]
    unknown = sorted(set(names) - set(catalog()))
    if unknown:
        print(f"semantic_hunt: error: unknown mutant(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    names = sorted(names, key=lambda n: (n not in reachable, catalog().index(n)))
    started = time.monotonic()
    rows: list[dict] = []
    skipped: list[str] = []
    tasks = [(name, options.examples, options.seed, options.per_mutant) for name in names]
    with multiprocessing.get_context("fork").Pool(options.jobs) as pool:
        pending = pool.imap(hunt_one, tasks)
        for index in range(len(tasks)):
            if options.budget is not None and time.monotonic() - started > options.budget:
                skipped = names[index:]
                pool.terminate()
                break
            row = next(pending)
            rows.append(row)
            mark = "found" if row.get("found") else "missed"
            shown = f"{row['name']}: {mark} after {row.get('after')} ({row['seconds']:.1f} s)"
            print(shown, flush=True)
    note = options.note
    if skipped:
        note = f"{len(skipped)} mutant(s) not run within the budget: {', '.join(skipped)}."
    options.out.write_text(render(rows, reachable, options.examples, options.seed, note), "utf-8")
    print(f"wrote {options.out} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
