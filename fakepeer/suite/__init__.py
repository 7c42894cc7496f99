"""The suite runner: every selected fixture against every SDK, one session per job, and the
known failures applied once after the run. `session/` runs one session; this drives many."""

from fakepeer.suite import known_failures
from fakepeer.suite.runner import DEFAULT_CASE_TIMEOUT, RunOptions, run_suite

__all__ = ["DEFAULT_CASE_TIMEOUT", "RunOptions", "known_failures", "run_suite"]
