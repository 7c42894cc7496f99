"""Issue 36: a signal in the first half second (the command line's imports, typer building the
commands) is the same one line and exit status 130 as later on, never a traceback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A traceback frame of the bench's own code, past the interpreter's start-up (which runs the
#: package's `__init__` and the first lines of `__main__`, before any handler can be set).
OWN_FRAME = re.compile(
    r'fakepeer/(?!__init__\.py")(?!__main__\.py", line \d+, in <module>)|typer/|click/'
)
#: Moments from the process's start: imports, typer's command building, the run's start.
DELAYS = (0.08, 0.15, 0.22, 0.3, 0.38, 0.46, 0.55, 0.7)


def _interrupted_at(delay: float, argv: list[str]) -> tuple[int, str]:
    process = subprocess.Popen(
        argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, err


@pytest.mark.parametrize(
    "launcher",
    [
        ["-m", "fakepeer"],
        ["-c", "from fakepeer.__main__ import entry; entry()"],
    ],
    ids=["python -m", "console script"],
)
def test_sigint_while_starting_is_one_line(launcher: list[str]) -> None:
    # every variant: a run that outlasts the last delay on a fast machine (a plain `-k values`
    # ended in under 0.7 s, and the signal then met a finished run or the interpreter's exit)
    argv = [sys.executable, *launcher, "run", "-k", "values", "--variants", "all", "--timeout", "5"]
    for delay in DELAYS:
        status, err = _interrupted_at(delay, argv)
        if "Traceback" in err and not OWN_FRAME.search(err):
            continue  # still inside the interpreter's own start-up: beyond any program's reach
        assert "Traceback" not in err, f"at {delay} s:\n{err}"
        assert status == 130, f"at {delay} s (exit {status}):\n{err}"
        assert "ryusen-conform: interrupted by SIGINT" in err, f"at {delay} s:\n{err}"


SWALLOWED = """
import os, signal, sys, time
from fakepeer import interrupts
interrupts.install()
class Swallows:
    def __del__(self):  # Python ignores what a __del__ raises: the interrupt is lost here
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
Swallows()
print("still running", file=sys.stderr)
from fakepeer.cli import main
sys.exit(main())
"""


def test_an_interrupt_python_swallowed_still_stops_the_command() -> None:
    """A signal whose KeyboardInterrupt landed where Python ignores exceptions (here a
    `__del__`; in the probe, a weak reference callback of the import system) printed
    "Exception ignored ... Traceback" and the run went on as if never interrupted."""
    done = subprocess.run(
        [sys.executable, "-c", SWALLOWED, "run", "-k", "values", "--timeout", "5"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "still running" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 130, done.stdout + done.stderr
    assert "ryusen-conform: interrupted by SIGINT" in done.stderr
    assert " passed," not in done.stdout, "no case may run after the interrupt"


WRAPPED = """
import builtins, os, time
import fakepeer.__main__ as launcher
class Field:
    def __set_name__(self, owner, name):  # as a dataclass field does while a module imports
        os.kill(os.getpid(), 2)
        time.sleep(0.2)
real_import = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "fakepeer.cli":
        class Interrupted:
            field = Field()
    return real_import(name, *args, **kwargs)
builtins.__import__ = importing
launcher.entry()
"""


def test_an_interrupt_python_wrapped_while_starting_is_one_line() -> None:
    """CI's clean-clone run caught a Ctrl-C landing in a dataclass field's `__set_name__`:
    Python wraps the KeyboardInterrupt in a RuntimeError, and that was printed as a traceback."""
    done = subprocess.run(
        [sys.executable, "-c", WRAPPED, "run", "-k", "values"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 130, done.stderr
    assert "interrupted by SIGINT while starting" in done.stderr


def test_an_error_wrapping_a_signal_is_the_interruption_and_any_other_is_not() -> None:
    """The command line's own handler reads the same chain (a lazy import inside a command)."""
    from fakepeer import interrupts

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise RuntimeError("Error calling __set_name__") from inner
    except RuntimeError as wrapped:
        error = wrapped
    saved = list(interrupts._received)
    try:
        interrupts._received[:] = []
        assert not interrupts.caused_by_signal(error)  # no signal: a program's own error
        interrupts._received[:] = [signal.SIGINT]
        assert interrupts.caused_by_signal(error)
        assert not interrupts.caused_by_signal(RuntimeError("unrelated"))
    finally:
        interrupts._received[:] = saved
