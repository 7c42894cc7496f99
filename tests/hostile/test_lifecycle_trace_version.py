"""Issue 36: a lifecycle scenario took a `conform.trace` answer in protocol version 9.0 or 0.1,
which every exchange fixture refuses (test_bounds_and_errors.py): the model server's link now
holds the trace answer's version to the bench's major as the exchange fixtures do."""

from __future__ import annotations

import pytest

from tests.hostile.bench_run import host_command
from tests.support.helpers import run_cli as cli

SCENARIO = "lifecycle.admission-closed-window"


@pytest.mark.parametrize("version", ["9.0", "0.1", "none"])
def test_a_lifecycle_trace_answer_in_a_foreign_version_fails(version: str) -> None:
    host = host_command("trace_version_on_case.py", f"{SCENARIO}/server.invoke", version)
    done = cli("run", "-k", SCENARIO, "--sdk", host)
    assert done.returncode == 1, done.stdout + done.stderr
    wanted = "'version' is a required property" if version == "none" else "names no protocol"
    assert wanted in done.stdout, done.stdout
    assert done.stdout.splitlines()[-1] == "0 passed, 0 failed, 1 error"


def test_a_lifecycle_trace_answer_of_this_major_passes() -> None:
    host = host_command("trace_version_on_case.py", f"{SCENARIO}/server.invoke", "1.0")
    done = cli("run", "-k", SCENARIO, "--sdk", host)
    assert done.returncode == 0, done.stdout + done.stderr
