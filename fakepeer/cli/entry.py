"""`main`, the command line as a program: streams that survive a closed pipe, signals and
interrupts, and every way a command ends turned into one exit status (2 for a usage, fixture or
report error, said in one paragraph; 130 for a signal, said in one line)."""

from __future__ import annotations

import contextlib
import sys

import typer

from fakepeer import interrupts
from fakepeer.cases import FixtureError
from fakepeer.cases.root import RootError
from fakepeer.cli.commands import app
from fakepeer.cli.help import plain_help
from fakepeer.cli.options import UsageProblem
from fakepeer.cli.outputs import REPORTS_WRITTEN, say, say_interrupted
from fakepeer.session import EXIT_INTERRUPTED, EXIT_USAGE
from fakepeer.streams import PipeSafeStream
from fakepeer.suite.order import bare_shuffle_argv
from fakepeer.transport import close_all
from fakepeer.transport.inprocess import exiting_with


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: usage, fixture and report errors are one paragraph, exit status 2.
    Called as the program (no `argv`), threads an in-process host left cannot hold it."""
    REPORTS_WRITTEN.clear()
    try:
        interrupts.install()
        interrupts.pending()  # a signal during the imports whose interrupt was swallowed
        sys.stdout = PipeSafeStream(sys.stdout)  # `run | head -1` must not cost the reports
        if not isinstance(sys.stderr, PipeSafeStream):  # nor a host closing it, a dump
            sys.stderr = PipeSafeStream(sys.stderr)
        command = typer.main.get_command(app)
        plain_help(command)
        args = bare_shuffle_argv(sys.argv[1:] if argv is None else argv)
        command.main(args=args, prog_name="ryusen-conform", standalone_mode=True)
        interrupts.decided = True
        status = 0
    except SystemExit as exc:  # typer reports usage errors itself (exit status 2)
        interrupts.decided = True  # first: no call before it, so no signal handler runs first
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
        if status == EXIT_INTERRUPTED and interrupts.received():  # typer's silent Exit(130)
            say_interrupted("every SDK process was stopped")
    except (UsageProblem, RootError) as exc:
        interrupts.decided = True
        say(str(exc))
        status = EXIT_USAGE
    except FixtureError as exc:
        interrupts.decided = True
        count = len(exc.problems)
        say(f"{count} fixture problem(s); nothing was run:\n" + "\n".join(map(str, exc.problems)))
        status = EXIT_USAGE
    except BaseException as exc:  # a KeyboardInterrupt, or an error Python wrapped one in
        interrupts.decided = True
        if not (isinstance(exc, KeyboardInterrupt) or interrupts.caused_by_signal(exc)):
            raise
        close_all()
        say_interrupted("every SDK process was stopped")
        status = EXIT_INTERRUPTED
    finally:
        close_all()
    with contextlib.suppress(Exception):
        sys.stdout.flush()  # what is still buffered fails now, not after the status is decided
    error = getattr(sys.stdout, "error", None)
    if error is not None:
        say(
            f"standard output failed ({error}): what this command printed is lost (reports "
            "written to files are not)"
        )
        if status == 0 and not REPORTS_WRITTEN:  # a listing, a timeline or a summary that
            status = EXIT_USAGE  # nobody got is no success; a run's report still holds it
    if argv is None:
        interrupts.settle()
        exiting_with(int(status))
    return int(status)
