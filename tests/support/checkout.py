"""A private copy of this checkout, for tests that build, install or `npm ci` in one.

Why: a build (`pip wheel`, `python -m build`, `pip install -e .`) writes `build/` and
`*.egg-info` into the folder it builds, and `npm ci` deletes `runners/node/node_modules` before
it reinstalls it; done in the checkout itself, they race the tests running beside them under
`pytest -n auto` (a Node host started meanwhile finds no dependencies). A copy of the files git
knows (tracked, or new and not ignored) is what a clean clone holds, so nothing is lost.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: What a copy never takes when git cannot list the files (an unpacked sdist).
LEFT_OUT = ("node_modules", "__pycache__", "build", "dist", "*.egg-info", ".git", ".*_cache")


def checkout_files(root: Path = REPO) -> list[str]:
    """The checkout's files, relative: tracked or new and not ignored; [] outside git."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        return []
    names = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [name for name in names if name and (root / name).is_file()]


def copy_checkout(destination: Path, root: Path = REPO) -> Path:
    """Copy the checkout's files into `destination` (created); return it."""
    names = checkout_files(root)
    if not names:
        shutil.copytree(root, destination, ignore=shutil.ignore_patterns(*LEFT_OUT))
        return destination
    for name in names:
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)  # with its mode: `conform` stays executable
    return destination
