"""The command line end to end, against the table-driven host (a real subprocess SDK)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakepeer.session import targets
from fakepeer.transport import CommandError
from tests.support.helpers import TABLE_HOST, echo_scenario
from tests.support.helpers import run_cli as conform

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    for run_id in ("ok", "echo", "wrong-value", "crash", "hang", "garbage"):
        echo_scenario(run_id).write(root)
    echo_scenario("caps", capabilities=("event_waits",)).write(root)
    echo_scenario("advice", level="recommended", expect_value="other").write(root)
    return root


def sdk_args(corpus: Path, timeout: str = "2") -> list[str]:
    return [
        "--sdk",
        f"{sys.executable} {TABLE_HOST}",
        "--no-default-fixtures",
        "--fixtures",
        str(corpus),
        "--timeout",
        timeout,
    ]


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_run_reports_and_exit_status(corpus: Path, tmp_path: Path) -> None:
    report = tmp_path / "out" / "report.json"
    junit = tmp_path / "out" / "junit.xml"
    markdown = tmp_path / "out" / "summary.md"
    failures = tmp_path / "known.txt"
    result = conform(
        "run",
        *sdk_args(corpus),
        "--report-json",
        str(report),
        "--junit",
        str(junit),
        "--markdown",
        str(markdown),
        "--write-failures",
        str(failures),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert last_line(result.stdout) == "3 passed, 1 failed, 3 errors, 1 skipped, 1 warning"
    assert "Traceback" not in result.stdout + result.stderr
    assert "FAIL t.wrong-value" in result.stdout and "WARNING t.advice" in result.stdout
    assert "table host: crashing on purpose" in result.stdout
    document = json.loads(report.read_text())
    assert document["summary"]["total"] == 8
    assert junit.read_text().startswith("<?xml")
    assert "# Ryusen conformance report" in markdown.read_text()
    listed = [
        line.split("#")[0].strip()
        for line in failures.read_text().splitlines()
        if not line.startswith("#")
    ]
    # a difference in recommended parts only is a warning, not a failure to list
    assert listed == ["t.crash", "t.garbage", "t.hang", "t.wrong-value"]

    again = conform("run", *sdk_args(corpus), "--known-failures", str(failures))
    assert again.returncode == 0, again.stdout + again.stderr
    assert last_line(again.stdout) == "3 passed, 0 failed, 1 skipped, 4 xfailed, 1 warning"


def test_recommended_only_failures_pass_unless_strict(corpus: Path) -> None:
    args = [*sdk_args(corpus), "-k", "advice"]
    assert conform("run", *args).returncode == 0
    strict = conform("run", *args, "--strict")
    assert strict.returncode == 1
    assert last_line(strict.stdout) == "1 passed, 0 failed, 1 warning"  # the warning fails it


def test_selection_list_and_shards(corpus: Path) -> None:
    listing = conform("run", *sdk_args(corpus), "--list", "-k", "h")
    assert listing.returncode == 0
    ids = [line.split("\t")[0] for line in listing.stdout.splitlines()]
    assert ids == ["t.crash", "t.echo", "t.hang"]
    caps = conform("run", *sdk_args(corpus), "--list", "-k", "caps").stdout
    assert caps == "t.caps\tdiscovery\trequired\tevent_waits\n"
    shards = [
        conform("run", *sdk_args(corpus), "--list", "--shard", f"{k}/3").stdout.split()
        for k in (1, 2, 3)
    ]
    firsts = [word for shard in shards for word in shard if word.startswith("t.")]
    assert sorted(firsts) == [
        "t.advice",
        "t.caps",
        "t.crash",
        "t.echo",
        "t.garbage",
        "t.hang",
        "t.ok",
        "t.wrong-value",
    ]
    assert conform("run", *sdk_args(corpus), "--list", "--shard", "1/3").stdout.split() == shards[0]


def test_jobs_and_two_sdks(corpus: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = conform(
        "run",
        *sdk_args(corpus),
        "--sdk",
        str(TABLE_HOST.relative_to(REPO)),
        "--jobs",
        "2",
        "-k",
        "h",
        "--report-json",
        str(report),
    )
    document = json.loads(report.read_text())
    assert [len(sdk["cases"]) for sdk in document["sdks"]] == [3, 3]
    assert (
        last_line(result.stdout) == "2 passed, 0 failed, 4 errors"
    )  # per SDK: t.echo passes; t.crash, t.hang error


def test_shard_reports_merge(corpus: Path, tmp_path: Path) -> None:
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard{k}.json"
        conform(
            "run", *sdk_args(corpus), "-k", "h", "--shard", f"{k}/2", "--report-json", str(path)
        )
        paths.append(str(path))
    merged = tmp_path / "merged.json"
    result = conform("merge", *paths, "--out", str(merged))
    assert result.returncode == 1
    assert last_line(result.stdout) == "1 passed, 0 failed, 2 errors"
    assert json.loads(merged.read_text())["summary"]["total"] == 3


def test_usage_and_fixture_errors_exit_2_without_traceback(tmp_path: Path, corpus: Path) -> None:
    cases = [
        conform("run", "--bogus"),
        conform("run", *sdk_args(corpus), "--shard", "9/2"),
        conform(
            "run", "--sdk", "./no/such/host", "--no-default-fixtures", "--fixtures", str(corpus)
        ),
        conform("run", *sdk_args(corpus), "-k", "matches-nothing"),
        conform("run", *sdk_args(corpus), "--known-failures", str(tmp_path / "missing.txt")),
        conform("merge", str(tmp_path / "missing.json")),
    ]
    broken = tmp_path / "broken" / "values"
    broken.mkdir(parents=True)
    (broken / "x.json").write_text('{"id": "x"}')
    cases.append(conform("run", "--no-default-fixtures", "--fixtures", str(broken.parent)))
    for result in cases:
        assert result.returncode == 2, result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr
    assert "x.json: (root): 'title' is a required property" in cases[-1].stderr


def test_schema_export(tmp_path: Path) -> None:
    result = conform("schema", "--out", str(tmp_path / "schemas"))
    assert result.returncode == 0, result.stderr
    names = {path.name for path in (tmp_path / "schemas").iterdir()}
    assert {"fixture.schema.json", "report.schema.json", "invoke.schema.json"} <= names


def test_missing_default_sdk_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(targets, "default_python_host", lambda: tmp_path / "host.py")
    with pytest.raises(CommandError, match="--sdk"):
        targets.targets_from_options(None)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_ctrl_c_leaves_no_sdk_process(corpus: Path) -> None:
    args = [*sdk_args(corpus, timeout="60"), "-k", "hang"]
    bench = subprocess.Popen(
        [sys.executable, "-m", "fakepeer", "run", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        children: list[int] = []
        while not children and time.monotonic() < deadline:
            children = _children(bench.pid)
            time.sleep(0.05)
        assert children, "the bench never started the SDK"
        time.sleep(0.5)  # let it reach the hanging case; correctness does not depend on this
        bench.send_signal(signal.SIGINT)
        _, stderr = bench.communicate(timeout=30)
    finally:
        if bench.poll() is None:
            bench.kill()
    assert bench.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert all(_gone(child) for child in children)
    assert os.getpid()


def test_h_is_help_and_all_mixed_with_names_is_named_as_such() -> None:
    """Issue 22 (11): `-h` as `--help`; `--variants all,bogus` does not call `all` unknown."""
    for command in ([], ["run"], ["merge"], ["fixtures", "validate"]):
        short = conform(*command, "-h")
        assert short.returncode == 0 and short.stdout == conform(*command, "--help").stdout
    mixed = conform("run", "--variants", "all,bogus", "--list")
    assert mixed.returncode == 2
    assert (
        "all and none stand alone" in mixed.stderr and "unknown variant 'all'" not in mixed.stderr
    )


def test_ctrl_c_gives_one_not_run_line_and_exit_130(tmp_path: Path) -> None:
    """Issue 22 (7): SIGINT mid-run: exit 130, one summary line for all cases not run (not one
    line per case), and no traceback."""
    root = tmp_path / "fixtures"
    echo_scenario("hang").write(root)
    for index in range(30):
        echo_scenario(f"zz-after-{index:02}").write(root)
    args = [*sdk_args(root, timeout="60"), "--jobs", "1"]
    bench = subprocess.Popen(
        [sys.executable, "-m", "fakepeer", "run", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not _children(bench.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # let it reach the hanging case (sorted first)
        bench.send_signal(signal.SIGINT)
        stdout, stderr = bench.communicate(timeout=30)
    finally:
        if bench.poll() is None:
            bench.kill()
    assert bench.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr
    lines = [line for line in stdout.splitlines() if "not run" in line]
    assert len(lines) == 1, lines
    assert lines[0].startswith("31 case(s) not run"), lines
    assert "31 case(s) not run" in stderr


def test_one_metavar_style_across_every_command() -> None:
    """Issue 22 (11): every option that takes a value names it the same way in every command
    (`--sdk CMD`, never `--sdk SDK`; no `OUTPUT`, `WAIT` or `SOURCE` echoing the option's own
    name), and a required argument reads `ID`, not typer's `{ID}`."""
    import typer

    from fakepeer import cli

    command = typer.main.get_command(cli.app)
    cli._plain_help(command)
    seen: list[str] = []

    def walk(group: object, path: tuple[str, ...]) -> None:
        for param in getattr(group, "params", ()):
            if getattr(param, "param_type_name", "") == "argument":
                assert "{" not in param._usage_display_name(), (path, param.name)
                continue
            if param.is_flag or param.name == "help":
                continue
            metavar = param.metavar
            assert metavar, (path, param.opts)
            echo = param.name.upper().replace("_", "-")
            assert metavar not in (echo, param.name.upper()), (path, param.opts, metavar)
            if "--sdk" in param.opts:
                assert metavar == "CMD", (path, metavar)
                seen.append(" ".join(path))
        for name, sub in getattr(group, "commands", {}).items():
            walk(sub, (*path, name))

    walk(command, ())
    assert {"run", "fuzz", "simulate", "fixtures record"} <= set(seen)
    usage = conform("fixtures", "new", "--help").stdout.splitlines()[0]
    assert usage.endswith("[OPTIONS] ID"), usage
