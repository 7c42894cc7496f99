"""The README's failure examples are real output: each is rerun here against the mutant SDK it
names and every line the README shows must appear, in order, in what the bench prints.

The examples are excerpts (other cases trimmed), so the check is "each README line, in order, is
a line of the real output", not equality.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

#: (the command as the README gives it, a line of the example block it introduces)
EXAMPLES = [
    (
        '--sdk "python3 tests/mutants/mutant_host.py replay-reruns-callback" -k replay',
        "FAIL replay.callback-not-rerun (replay, required): 3 difference(s): invariant, value",
    ),
    (
        '--sdk "python3 tests/mutants/mutant_host.py json-not-canonical" -k keys-sorted-by-utf16',
        "WARNING json.keys-sorted-by-utf16 (json, required): 1 difference(s) in recommended parts "
        "only: value",
    ),
    (
        '--sdk "python3 tests/mutants/mutant_host.py variation.refusal-category" '
        "-k values.unknown-tag",
        "WARNING values.unknown-tag-refused (values, required): 1 difference(s) in recommended "
        "parts only: value",
    ),
    (
        '--sdk "python3 tests/mutants/mutant_host.py manifest-default-timeout" '
        "-k manifest.conformance-registry-exact",
        "FAIL manifest.conformance-registry-exact (manifest, required): 4 difference(s): value",
    ),
]


def _block_starting_with(first_line: str) -> list[str]:
    for block in re.findall(r"```text\n(.*?)```", README, flags=re.S):
        lines = block.rstrip("\n").split("\n")
        if lines[0] == first_line:
            return lines
    raise AssertionError(f"the README has no example starting with {first_line!r}")


def _in_order(shown: list[str], output: list[str]) -> list[str]:
    """The README lines not found, in order, among the output's lines."""
    missing, position = [], 0
    for line in shown:
        if not line.strip():
            continue
        try:
            position = output.index(line, position) + 1
        except ValueError:
            missing.append(line)
    return missing


@pytest.mark.parametrize(("arguments", "first_line"), EXAMPLES)
def test_readme_failure_example_is_what_the_bench_prints(arguments: str, first_line: str) -> None:
    assert " ".join(arguments.split()) in " ".join(README.split()), "the README names the command"
    command = [sys.executable, "-m", "fakepeer", "run", *shlex.split(arguments)]
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )
    warning = first_line.startswith("WARNING")  # a warning alone keeps the run green
    assert result.returncode == (0 if warning else 1), result.stdout + result.stderr
    shown = _block_starting_with(first_line)
    assert _in_order(shown, result.stdout.splitlines()) == []
