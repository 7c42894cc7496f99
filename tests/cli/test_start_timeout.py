"""`run --start-timeout`: a host that takes longer to start than the registration deadline
errors with the reason; given a longer deadline, the same host passes."""

from __future__ import annotations

import sys

from tests.support.helpers import HOSTS, run_cli

SLOW = f"{sys.executable} {HOSTS / 'slow_start_host.py'} 2"
CASE = "values.str-leading-nul-roundtrip"


def test_a_longer_start_timeout_lets_a_slow_host_register() -> None:
    short = run_cli("run", "--sdk", SLOW, "-k", CASE, "--start-timeout", "0.5")
    assert short.returncode == 1, short.stdout
    assert short.stdout.strip().splitlines()[-1] == "0 passed, 0 failed, 1 error"
    long = run_cli("run", "--sdk", SLOW, "-k", CASE, "--start-timeout", "30")
    assert long.returncode == 0, long.stdout[-2000:]
    assert long.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_start_timeout_must_be_positive() -> None:
    bad = run_cli("run", "--start-timeout", "0")
    assert bad.returncode == 2 and "--start-timeout takes a number of seconds" in bad.stderr
