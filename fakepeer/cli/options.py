"""The options and checks more than one command shares, and the usage error they raise.

Why one place: `run` and `merge` offer the same report options (one per registered format), and
every bound a command line can give is refused the same way, one paragraph and exit status 2.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from fakepeer import atomic
from fakepeer.cases import Shard
from fakepeer.cases.keywords import KeywordError, Keywords
from fakepeer.report import reporters

#: Longest --timeout / --max-time accepted (a day): beyond it a deadline is no deadline.
MAX_SECONDS = 86_400.0
#: Most SDK sessions in parallel (each one is a process; the machine has only so many cores).
MAX_JOBS = 64


class UsageProblem(Exception):
    """A command line that cannot be carried out; reported as one paragraph, exit status 2."""


def with_report_options(command: Callable, *, lenient_option: bool = True) -> Callable:
    """Add one `PATH` option per registered report format (and `--strict`, `--lenient`) to a
    command, handed to it as `reports={name: path}`: `run` and `merge` share this one list.
    `merge` has no `--lenient`: it never exits greener than its shards, so it would not apply."""
    signature = inspect.signature(command, eval_str=True)
    added = [
        inspect.Parameter(
            reporter.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                Path | None, typer.Option(*reporter.options, help=reporter.help, metavar="PATH")
            ],
        )
        for reporter in reporters()
    ]
    added += [
        inspect.Parameter(
            "strict",
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[
                bool, typer.Option("--strict", help="Recommended-level failures fail the run.")
            ],
        ),
        inspect.Parameter(
            "lenient",
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[
                bool,
                typer.Option(
                    "--lenient",
                    help="A listed known failure that passes, and a listed id that is no "
                    "fixture, do not fail the run.",
                ),
            ],
        ),
    ]
    if not lenient_option:
        added = [p for p in added if p.name != "lenient"]
    shared = {"reports", *(p.name for p in added)}
    kept = [p for p in signature.parameters.values() if p.name not in shared]

    @functools.wraps(command)
    def wrapper(**kwargs: object) -> None:
        paths = {r.name: kwargs.pop(r.name, None) for r in reporters()}
        # absolute now: an in-process host that changes the current folder cannot move them
        absolute = {name: Path(os.path.abspath(path)) for name, path in paths.items() if path}
        command(reports=absolute, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*kept, *added]}
    return wrapper


def check_positive(option: str, seconds: float) -> None:
    """Refuse a time bound that is no bound: not above 0, not finite, or over a day."""
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        raise UsageProblem(
            f"{option} takes a number of seconds above 0 and at most {MAX_SECONDS:g}, "
            f"got {seconds:g}"
        )


def check_outputs(paths: dict[str, Path], *more: Path | None) -> None:
    """Refuse unwritable report paths before the run starts, so no result is lost to them."""
    for path in (*paths.values(), *more):
        if path is None:
            continue
        try:
            atomic.check_writable(path)
        except OSError as exc:
            raise UsageProblem(f"cannot write {path}: {exc}") from None


def parse_shard(text: str | None) -> Shard | None:
    """`--shard K/N` read, or None without it."""
    if text is None:
        return None
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None


def parse_keywords(texts: list[str]) -> list[Keywords]:
    """Every `-k` expression parsed (a fixture must match them all)."""
    try:
        return [Keywords.parse(text) for text in texts]
    except KeywordError as exc:
        raise UsageProblem(str(exc)) from None
