#!/usr/bin/env python3
"""Peak memory of a run: 1x and 10x the corpus, with and without reports, and huge answers.

Each figure is the peak resident set size (`ru_maxrss`) of a fresh Python process running
`ryusen-conform run` in process against the bundled Python reference host (a subprocess, not
counted) and, with reports, writing the JSON, HTML, JUnit and Markdown reports. "10x" is ten
copies of every fixture file written to a temporary folder under distinct ids and loaded with
`--no-default-fixtures --fixtures DIR`, as a user's larger corpus arrives: nothing is shared
between copies, so the figure shows what the run keeps per fixture and per case. The huge line
runs N echo cases against `huge_host.py`, which answers each with a legal 15.9 MiB frame.

    python bench/bench_memory.py [--huge-cases 24]

Goal (issue 24): 10x costs at most 1.5x the peak of 1x, with and without reports; the huge
host stays under HUGE_BOUND_MB (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

HUGE_BOUND_MB = 400
RATIO_GOAL = 1.5
#: An id the model server makes by hashing a run id (an event or operation id): a scenario whose
#: expectation names one cannot be copied under another id by renaming text.
SERVER_HASH = re.compile(r'"(?:evt|op)-[0-9a-f]{16}"')


def copy_corpus(folder: Path, copies: int) -> int:
    """Write `copies` copies of every fixture file under `folder`, each under its own id.

    The copies of a lifecycle scenario whose expectation names a server-made hash of its run id
    fail (the hash follows the new id); they are listed in `folder/known-failures.txt`, to run
    as expected failures (each keeps its findings: the figure errs on the costly side).
    """
    written = 0
    unrenamable: list[str] = []
    for source in sorted((ROOT / "fixtures").rglob("*.json")):
        document = json.loads(source.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or "id" not in document:
            continue
        for copy in range(copies):
            ident = f"{document['id']}-copy{copy}" if copy else document["id"]
            target = folder / source.parent.name / f"{ident}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({**document, "id": ident}, indent=2)
            old = document["id"]  # the exchange ids and run ids it names follow the new id
            text = text.replace(f'"{old}#', f'"{ident}#').replace(f'run-{old}"', f'run-{ident}"')
            text = text.replace(f'"op:run-{old}:', f'"op:run-{ident}:')  # an operation id
            target.write_text(text, encoding="utf-8")
            written += 1
            if copy and "lifecycle" in document and SERVER_HASH.search(text):
                unrenamable.append(ident)
    (folder / "known-failures.txt").write_text("".join(f"{i}\n" for i in unrenamable))
    return written


def child(copies: int, reports: bool, huge_cases: int) -> None:
    """Run once and print the peak RSS in MB (as JSON, with the outcome counts)."""
    if huge_cases:
        from fakepeer.report import RunInfo, catalog_from_fixtures, reporters, to_document
        from fakepeer.session import command_target
        from fakepeer.suite import RunOptions, run_suite

        sys.path.insert(0, str(HERE))
        from bench_session import make_fixtures

        fixtures = make_fixtures(huge_cases)
        target = command_target(f"{sys.executable} {HERE / 'huge_host.py'}")
        result = run_suite([target], fixtures, RunOptions(timeout=30))
        if reports:
            with tempfile.TemporaryDirectory() as folder:
                out = Path(folder)
                document = to_document(result, RunInfo(catalog=catalog_from_fixtures(fixtures)))
                for reporter in reporters():  # every format, as `run` writes them
                    reporter.write(document, out / reporter.name)
        cases = sum(result.counts().values())
    else:
        cases = _run_copies(copies, reports)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": round(peak, 1), "cases": cases}))


def _run_copies(copies: int, reports: bool) -> int:
    """`ryusen-conform run` over `copies` copies of the corpus as files, in this process."""
    from fakepeer.cli import main as cli

    with tempfile.TemporaryDirectory() as folder:
        corpus, out = Path(folder) / "corpus", Path(folder) / "out"
        cases = copy_corpus(corpus, copies)
        argv = ["run", "--sdk", str(ROOT / "runners" / "python" / "conform")]
        argv += ["--no-default-fixtures", "--fixtures", str(corpus), "--timeout", "30"]
        argv += ["--known-failures", str(corpus / "known-failures.txt")]
        if reports:
            argv += ["--report-json", str(out / "report.json"), "--junit", str(out / "junit.xml")]
            argv += ["--markdown", str(out / "summary.md"), "--html", str(out / "report.html")]
        out.mkdir()
        status = cli(argv)
        if status != 0:
            raise SystemExit(f"the run exited with status {status}")
    return cases


def measure(copies: int, reports: bool, huge_cases: int = 0) -> dict:
    argv = [sys.executable, __file__, "--child", str(copies), str(int(reports)), str(huge_cases)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--huge-cases", type=int, default=24)
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], bool(args.child[1]), args.child[2])
        return 0
    ok = True
    for reports in (False, True):
        one, ten = measure(1, reports), measure(10, reports)
        ratio = ten["peak_mb"] / one["peak_mb"]
        ok = ok and ratio <= RATIO_GOAL
        label = "with reports" if reports else "no reports  "
        print(
            f"corpus {label}: 1x {one['peak_mb']:7.1f} MB ({one['cases']} cases)"
            f"   10x {ten['peak_mb']:7.1f} MB ({ten['cases']} cases)"
            f"   ratio {ratio:.2f} (goal <= {RATIO_GOAL})"
        )
    for reports in (False, True) if args.huge_cases else ():  # --huge-cases 0: skip them
        huge = measure(1, reports, args.huge_cases)
        ok = ok and huge["peak_mb"] <= HUGE_BOUND_MB
        label = "with reports" if reports else "no reports  "
        print(
            f"15.9 MiB answers {label}: {args.huge_cases} cases, peak {huge['peak_mb']:.1f} MB "
            f"(bound {HUGE_BOUND_MB} MB)"
        )
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
