"""The edit-run loop's selections: `--ids-from FILE` and `--last-failed` (as pytest's --lf).

The last run's failures are kept in the user's cache folder (fakepeer.cases.cache), one record
per working folder and fixture root, so `run --last-failed` after a red run re-runs exactly what
failed. A run updates the record for the ids it ran and keeps the others, so a narrower run
does not forget the failures it did not look at.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from fakepeer import atomic
from fakepeer.cases import cache
from fakepeer.session.outcomes import FAILING
from fakepeer.session.results import RunResult
from fakepeer.suite.known_failures import KnownFailuresError, parse_list


class RerunError(ValueError):
    """An ids file that cannot be read, or a last-failed record that cannot be kept."""


def read_ids(path: Path) -> set[str]:
    """The ids of an `--ids-from` file: one a line, `#` comments (a known-failures list works,
    every `[LABEL]` section of it included)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RerunError(f"cannot read --ids-from {path}: {exc}") from None
    try:
        sections = parse_list(text, path)
    except KnownFailuresError as exc:
        raise RerunError(str(exc)) from None
    return {ident for entries in sections.values() for ident in entries}


def record_path(fixture_root: Path) -> Path | None:
    """Where this folder's last failures are kept (None when the cache is off)."""
    root = cache.cache_root()
    if root is None:
        return None
    where = f"{Path.cwd().resolve()}\0{fixture_root.resolve()}".encode("utf-8", "surrogatepass")
    return root / "last-failed" / hashlib.sha256(where).hexdigest()[:32]


def read_last_failed(fixture_root: Path) -> set[str] | None:
    """The ids that failed when last run here; None when nothing was recorded."""
    path = record_path(fixture_root)
    if path is None:
        raise RerunError(f"--last-failed needs the cache, which {cache.ENV}=off turned off")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return {line for line in text.splitlines() if line and not line.startswith("#")}


def record_last_failed(fixture_root: Path, run: RunResult, ran: Iterable[str]) -> None:
    """Remember the run's raw failures (any SDK); a record that cannot be written costs only
    the next --last-failed."""
    path = record_path(fixture_root)
    if path is None or run.interrupted:
        return
    ran_ids = set(ran)
    failed = {
        case.id
        for sdk in run.sdks
        for case in sdk.results
        if case.raw_outcome in FAILING and not case.not_run
    }
    previous = read_last_failed(fixture_root) or set()
    kept = (previous - ran_ids) | failed
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = "".join(f"{ident}\n" for ident in sorted(kept))
        atomic.write_text(path, f"# ryusen-conform --last-failed (pid {os.getpid()})\n{body}")
    except OSError:
        return


def wanted(case_id: str, ids: set[str]) -> bool:
    """A case is in a set of ids when its id is, or its fixture's (FIXTURE@VARIANT)."""
    return case_id in ids or case_id.partition("@")[0] in ids
