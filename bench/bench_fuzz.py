"""How fast `fuzz` checks documents, and how soon it finds a broken value codec.

`python bench/bench_fuzz.py [--examples 2000] [--repeat 3] [--seed 7] [--mutants A,B]` prints
(`--repeat 0`: no rate):
- `rate`: `run_campaign` against the Python reference SDK (the `fuzz` command's campaign, host
  start included), documents per second, best of `--repeat`;
- per value-codec mutant (tests/mutants) and property, the number of documents sent before the
  first disagreement (curated examples included, which come first; `--no-curated`: drawn
  documents only): by the seeded bulk
  generator (`bulk`) and by hypothesis's draws (`hypothesis`, what the campaign sent before the
  bulk generator). `-` means none in the first `--find-examples` of that property.
Run it with `PYTHONPATH` set to the tree to measure (a tree without `generator.py` gives only the
hypothesis column).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ("u64-decoded-as-i64", "negative-zero-lost", "lenient-base64", "lone-surrogates-accepted",
           "null-member-dropped", "lenient-integers", "lenient-f64-text", "depth-limit-off-by-one",
           "strings-nfc-normalized", "instant-duration-as-i64", "blob-media-type-dropped",
           "pointer-not-escaped")  # fmt: skip


def _first_failure(session, cases) -> int | None:  # type: ignore[no-untyped-def]
    from fakepeer.fuzz.checks import problem

    replies = session.echo_many([case.doc for case in cases])
    for index, (case, reply) in enumerate(zip(cases, replies, strict=True)):
        if reply is None or problem(case, reply) is not None:
            return index + 1
    return None


def _collector(drawn: list):  # type: ignore[no-untyped-def]
    def collect(case) -> None:  # type: ignore[no-untyped-def]
        drawn.append(case)

    return collect


def _to_find(name: str, examples: int, seed: int, curated: bool) -> dict[str, tuple[str, str]]:
    from fakepeer.fuzz import campaign
    from fakepeer.fuzz.echo import EchoSession
    from fakepeer.session.targets import command_target

    host = f"{sys.executable} {ROOT / 'tests' / 'mutants' / 'mutant_host.py'} {name}"
    session = EchoSession(command_target(host, cwd=ROOT), 10.0)
    found: dict[str, tuple[str, str]] = {}
    try:
        session.start()
        for prop in campaign.PROPERTIES:
            drawn: list = []
            campaign._hypothesis(prop, examples, seed, _collector(drawn))
            skip = 0 if curated else len(campaign.CURATED[prop]())
            old = _first_failure(session, drawn[skip:])
            try:
                from fakepeer.fuzz.generator import generate
            except ImportError:
                new = "n/a"
            else:
                bulk = campaign.CURATED[prop]() if curated else []
                bulk += generate(seed, prop, examples)
                new = str(_first_failure(session, bulk) or "-")
            found[prop] = (new, str(old or "-"))
    finally:
        session.close()
    return found


def main() -> None:
    """Print the rate and the examples-to-find table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--find-examples", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-curated", action="store_true", help="count drawn documents only")
    parser.add_argument("--mutants", default=",".join(MUTANTS), help="comma-separated; '' skips")
    args = parser.parse_args()
    from fakepeer.fuzz.campaign import run_campaign
    from fakepeer.session import default_target

    print(f"tree {os.environ.get('PYTHONPATH', '(installed)')}, load {os.getloadavg()[0]:.2f}")
    rates = []
    for _ in range(args.repeat):
        result = run_campaign(default_target(), examples=args.examples, seed=args.seed)
        assert not result.failures, [f.problem for f in result.failures]
        rates.append(result.rate)
        print(f"  {result.sent} documents in {result.seconds:.2f} s: {result.rate:.0f}/s")
    if rates:
        print(f"rate: best {max(rates):.0f} documents/s, load {os.getloadavg()[0]:.2f}")
    names = [name for name in args.mutants.split(",") if name]
    if names:
        print(f"documents to the first disagreement (seed {args.seed}): bulk / hypothesis")
    for name in names:
        started = time.monotonic()
        found = _to_find(name, args.find_examples, args.seed, not args.no_curated)
        cells = "  ".join(f"{prop} {new} / {old}" for prop, (new, old) in found.items())
        print(f"  {name:28} {cells}  ({time.monotonic() - started:.0f} s)")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
