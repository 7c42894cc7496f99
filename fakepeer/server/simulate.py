"""`ryusen-conform simulate`: run one workflow of a host's registry to its end on the model server.

The local test server an SDK author debugs with: the host registers, publishes its registry, and
the model server plays the run (discovery, forward attempts, retries, compensation, timers, waits,
children, emissions) on a virtual clock, with the events and faults the command line injects.
The timeline is printed with rich, or as JSON with `--json`.

Exit status: 0 when the run completed, 1 when it ended otherwise (failed, blocked, timed out,
...) or the host broke the protocol, 2 for a bad command line or a host that cannot start.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fakepeer.cases.macros import MacroError, expand
from fakepeer.protocol import strictjson
from fakepeer.protocol.durations import parse_duration_ms
from fakepeer.server.host import EXCHANGE_SECONDS, STARTUP_SECONDS, HostLink
from fakepeer.server.policy import DEFAULT_MAX_INVOCATIONS, ServerPolicy
from fakepeer.server.script import Fault, ScriptItem, parse_fault_option
from fakepeer.session.sdk import SdkSession, SessionError
from fakepeer.session.targets import command_target, default_target
from fakepeer.transport import CommandError, close_all
from fakepeer.transport.errors import TransportError

if TYPE_CHECKING:
    from fakepeer.server.loop import RunReport

_EVENT = re.compile(r"^(?P<at>[^=]+)=(?P<name>[^:{]+)(\{(?P<meta>[^}]*)\})?:(?P<payload>.*)$", re.S)
FAULT_HELP = (
    "Fault KIND[:MODE[:STEP[:ATTEMPT]]][+AFTER][*TIMES] (repeatable): KIND is lost_answer, "
    "duplicate, crash, restart, redeliver (the same request again after its answer was applied), "
    "rediscover (a discovery invoked again), or over HTTP http_502, http_503, http_timeout, "
    "http_reset; AFTER the ms a redeliver/rediscover waits; TIMES a count or 'all' (default 1). "
    "Examples: crash:forward:charge*all, rediscover:discover:t+500"
)


#: Longest --timeout / --max-time accepted (a day, as `run`).
MAX_SECONDS = 86_400.0
#: Seconds a simulation may take by default: a virtual-clock run of one workflow takes seconds.
DEFAULT_MAX_TIME = 120.0


class SimulateUsage(Exception):
    """A bad command line: one line on stderr, exit status 2."""


def parse_input(text: str) -> dict:
    """The run input: plain JSON notation (docs/host-contract.md §13.1; `$tagged` and `$bytes`
    allowed)."""
    try:  # strict: a repeated member, NaN, or nesting past the protocol's limit is refused
        document = strictjson.loads(text)
    except ValueError as exc:
        raise SimulateUsage(f"--input is not JSON the protocol accepts: {exc}") from None
    try:
        return expand({"$plain": document}, ("input",))  # type: ignore[return-value]
    except MacroError as exc:
        raise SimulateUsage(f"--input {exc.pointer}: {exc.message}") from None
    except RecursionError:  # unreachable below the nesting limit; kept as a last guard
        raise SimulateUsage("--input is nested too deeply") from None


def parse_at(text: str, option: str) -> int:
    """Virtual milliseconds: an integer, or a duration such as 1.5s or 2h30m."""
    text = text.strip()
    if not text.isascii():  # int() and isdigit() take other scripts' digits ('٣', '²')
        raise SimulateUsage(f"{option}: {text!r} is not a time: use ASCII digits (ms or 2s)")
    if text.isdigit():
        return int(text)
    try:
        value = parse_duration_ms(text)
    except (ValueError, ArithmeticError) as exc:
        raise SimulateUsage(
            f"{option}: {text!r} is not a time (ms or a duration like 2s): {exc}"
        ) from None
    if value < 0:
        raise SimulateUsage(f"{option}: {text!r} is before the start")
    return value


def parse_event(text: str) -> ScriptItem:
    """`AT=NAME[{k=v,...}]:PAYLOAD`: an event submitted at AT with UTF-8 PAYLOAD bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the locale could not decode reach us as surrogates
        shown = text.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        raise SimulateUsage(f"--event {shown!r}: not UTF-8 text") from None
    match = _EVENT.match(text)
    if match is None:
        raise SimulateUsage(
            f"--event {text!r}: expected AT=NAME[{{key=value,...}}]:PAYLOAD, e.g. "
            "2s=order.approved{order=A-1}:ok"
        )
    metadata: dict[str, str] = {}
    for pair in filter(None, (match["meta"] or "").split(",")):
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SimulateUsage(f"--event {text!r}: metadata pairs are key=value, got {pair!r}")
        metadata[key] = value
    payload = base64.b64encode(match["payload"].encode("utf-8")).decode("ascii")
    return ScriptItem(
        parse_at(match["at"], "--event"),
        "event",
        event=match["name"],
        payload={"t": "bytes", "v": payload},
        metadata=metadata,
    )


def parse_ambient(text: str) -> ScriptItem:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SimulateUsage(f"--ambient {text!r}: expected KEY=VALUE")
    return ScriptItem(0, "ambient", key=key, value=value)


def parse_count(text: str, option: str, minimum: int = 0) -> int:
    """A whole number for `option`, or a one-line usage error (typer's own check of an `int`
    option prints a four-line usage block)."""
    value = text.strip()
    if not value.isdigit() or int(value) < minimum:
        raise SimulateUsage(
            f"{option}: expected a whole number of at least {minimum}, not {text!r}"
        )
    return int(value)


def parse_policy(
    default: str | None, maximum: str | None, history_limit: str | None
) -> ServerPolicy:
    """The deployment policy from `--policy-default`, `--policy-max` and `--history-limit`."""
    limit = None if history_limit is None else parse_count(history_limit, "--history-limit")
    try:
        return ServerPolicy(
            parse_at(default, "--policy-default") if default is not None else None,
            parse_at(maximum, "--policy-max") if maximum is not None else None,
            *(() if limit is None else (limit,)),
        )
    except ValueError as exc:
        raise SimulateUsage(f"--history-limit: {exc}") from None


def parse_worker(text: str) -> ScriptItem:
    """`AT=INSTANCE[,release=R][,capacity=N][,busy=N][,capabilities=a+b]`: a second worker."""
    at, sep, spec = text.partition("=")
    instance, *pairs = spec.split(",")
    if not sep or not instance:
        raise SimulateUsage(
            f"--worker {text!r}: expected AT=INSTANCE[,release=R][,capacity=N][,busy=N]"
            "[,capabilities=a+b], e.g. 500=worker-2,busy=1"
        )
    worker: dict = {"instance": instance}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or key not in ("release", "capacity", "busy", "capabilities"):
            raise SimulateUsage(f"--worker {text!r}: unknown member {pair!r}")
        if key in ("capacity", "busy"):
            if not value.isdigit() or (key == "capacity" and int(value) < 1):
                raise SimulateUsage(
                    f"--worker {text!r}: {key} must be a whole number, not {value!r}"
                )
            worker[key] = int(value)
        elif key == "capabilities":
            worker[key] = [name for name in value.split("+") if name]
        else:
            worker[key] = value
    return ScriptItem(parse_at(at, "--worker"), "worker", worker=worker)


def parse_faults(texts: list[str]) -> list[Fault]:
    faults = []
    for text in texts:
        try:
            faults.append(parse_fault_option(text))
        except ValueError as exc:
            raise SimulateUsage(f"--fault {text!r}: {exc}") from None
    return faults


def fleet_options(
    hosts: int, routing: str, seed: str, releases: list[str], roll_at: list[str]
) -> dict | None:
    """A fleet's routing from the command line (None for one host with no fleet option)."""
    from fakepeer.server.routing import ROUTING_POLICIES

    if routing not in ROUTING_POLICIES:
        raise SimulateUsage(
            f"--routing: expected one of {', '.join(ROUTING_POLICIES)}, not {routing!r}"
        )
    if releases and len(releases) != hosts:
        raise SimulateUsage(f"--release: give one per --sdk ({hosts}), not {len(releases)}")
    if roll_at and routing != "rolling":
        raise SimulateUsage("--roll-at needs --routing rolling")
    if len(roll_at) > hosts - 1:
        raise SimulateUsage(f"--roll-at: at most one per later host ({hosts - 1})")
    rolls = []
    for text in roll_at:
        if text.startswith("#"):
            rolls.append({"invocations": parse_count(text[1:], "--roll-at #N", minimum=0)})
        else:
            rolls.append({"at_ms": parse_at(text, "--roll-at")})
    if hosts == 1 and not releases and routing == "alternate":
        return None
    return {
        "routing": routing,
        "seed": parse_count(seed, "--seed"),
        "releases": releases,
        "rolls": rolls,
    }


def simulate(
    sdk: Annotated[
        list[str] | None,
        typer.Option(
            "--sdk",
            help="Command starting a conformance host (default: bundled Python). Repeat it for "
            "a fleet: one run served by several hosts (docs/server.md, Fleets).",
        ),
    ] = None,
    routing: Annotated[
        str,
        typer.Option(
            "--routing",
            help="A fleet's routing policy: alternate, random (seeded by --seed) or rolling "
            "(the first host's release serves until --roll-at, then the next registers and "
            "the old drains).",
            metavar="POLICY",
        ),
    ] = "alternate",
    seed: Annotated[
        str, typer.Option("--seed", help="Seed of --routing random.", metavar="N")
    ] = "0",
    release: Annotated[
        list[str] | None,
        typer.Option(
            "--release",
            help="The release each --sdk of a fleet registers, in --sdk order (default: its "
            "own; with --routing rolling, a new one per later host).",
            metavar="ID",
        ),
    ] = None,
    roll_at: Annotated[
        list[str] | None,
        typer.Option(
            "--roll-at",
            help="When --routing rolling moves to the next host: AT (ms or a duration) or #N "
            "(after N invocations); repeatable, one per later host (default: #2, #4, ...).",
            metavar="AT",
        ),
    ] = None,
    function: Annotated[
        str, typer.Option("--function", help="The function ID to run.", metavar="ID")
    ] = "",
    input_text: Annotated[
        str,
        typer.Option(
            "--input", help="The run input as plain JSON (§13.1 notation).", metavar="JSON"
        ),
    ] = "null",
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="Submit an event: AT=NAME[{k=v,...}]:PAYLOAD (AT: ms or a duration; repeatable).",
        ),
    ] = None,
    fault: Annotated[list[str] | None, typer.Option("--fault", help=FAULT_HELP)] = None,
    ambient: Annotated[
        list[str] | None,
        typer.Option(
            "--ambient", help="Set the host's ambient state KEY=VALUE first (repeatable)."
        ),
    ] = None,
    server_restart: Annotated[
        list[str] | None,
        typer.Option(
            "--server-restart",
            help="Restart the model server at AT (ms or a duration; repeatable): volatile state "
            "lost, durable state kept.",
            metavar="AT",
        ),
    ] = None,
    worker: Annotated[
        list[str] | None,
        typer.Option(
            "--worker",
            help="Register a second worker routing must pass over: "
            "AT=INSTANCE[,release=R][,capacity=N][,busy=N][,capabilities=a+b] (repeatable).",
        ),
    ] = None,
    policy_default: Annotated[
        str | None,
        typer.Option(
            "--policy-default",
            help="Policy default run timeout for functions that declare none (ms or a duration).",
            metavar="DURATION",
        ),
    ] = None,
    policy_max: Annotated[
        str | None,
        typer.Option(
            "--policy-max",
            help="Policy maximum run timeout: activation rejects a function above it.",
            metavar="DURATION",
        ),
    ] = None,
    history_limit: Annotated[
        str | None,
        typer.Option(
            "--history-limit",
            help="Replay budget: history entries one invocation may carry (0-1024, default 1024).",
            metavar="N",
        ),
    ] = None,
    max_invocations: Annotated[
        str,
        typer.Option("--max-invocations", help="Stop after this many invocations.", metavar="N"),
    ] = str(DEFAULT_MAX_INVOCATIONS),
    trace: Annotated[
        bool,
        typer.Option("--trace", help="Show the callbacks each invocation started (conform.trace)."),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="Seconds one exchange with the host may take (its start: at least 10).",
            metavar="SECONDS",
        ),
    ] = EXCHANGE_SECONDS,
    max_time: Annotated[
        float,
        typer.Option(
            "--max-time",
            help="Seconds the whole simulation may take (host start included): past it the run "
            "stops, as after --max-invocations.",
            metavar="SECONDS",
        ),
    ] = DEFAULT_MAX_TIME,
    as_json: Annotated[bool, typer.Option("--json", help="Print the timeline as JSON.")] = False,
) -> None:
    """Run one workflow to its end on the model server (virtual clock) and print its timeline."""
    try:
        for option, seconds in (("--timeout", timeout), ("--max-time", max_time)):
            if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
                raise SimulateUsage(
                    f"{option} takes a number of seconds above 0 and at most {MAX_SECONDS:g}, "
                    f"not {seconds:g}"
                )
        if not function:
            raise SimulateUsage("--function ID is required")
        value = parse_input(input_text)
        script = [parse_ambient(text) for text in ambient or []]
        script += [parse_event(text) for text in event or []]
        script += [
            ScriptItem(parse_at(text, "--server-restart"), "server_restart")
            for text in server_restart or []
        ]
        script += [parse_worker(text) for text in worker or []]
        policy = parse_policy(policy_default, policy_max, history_limit)
        most = parse_count(max_invocations, "--max-invocations", minimum=1)
        faults = parse_faults(fault or [])
        targets = [command_target(command) for command in sdk] if sdk else [default_target()]
        fleet = fleet_options(len(targets), routing, seed, release or [], roll_at or [])
    except (SimulateUsage, CommandError) as exc:
        typer.echo(f"ryusen-conform: error: {exc}", err=True)
        raise typer.Exit(2) from None
    sessions = [SdkSession(target.factory) for target in targets]
    stop_at = time.monotonic() + max_time
    bound_reason = f"stopped: --max-time of {max_time:g} s"
    try:
        links = []
        for target, session in zip(targets, sessions, strict=True):
            try:
                started = min(time.monotonic() + max(timeout, STARTUP_SECONDS), stop_at)
                session.ensure_started(started)
            except (SessionError, TransportError) as exc:
                reason = exc.reason if isinstance(exc, SessionError) else str(exc)
                name = f" {target.label}" if len(targets) > 1 else ""
                typer.echo(
                    f"ryusen-conform: error: the host{name} did not start: {reason}", err=True
                )
                raise typer.Exit(2) from None
            link = HostLink(session, deadline=stop_at, limit=stop_at)
            link.exchange_seconds = timeout
            known = set((session.register_body or {}).get("functions", []))
            if known and function not in known:
                typer.echo(
                    f"ryusen-conform: error: --function {function!r} is not in the host's "
                    f"registry ({', '.join(sorted(known))})",
                    err=True,
                )
                raise typer.Exit(2)
            links.append(link)
        options = {"max_invocations": most, "keep_frames": as_json, "trace": trace}
        if fleet is None:
            from fakepeer.server.loop import ModelServer  # the model server: only when simulating

            server = ModelServer(links[0], policy=policy, **options)  # type: ignore[arg-type]
        else:
            from fakepeer.server.fleet import fleet_server

            labels = [target.label for target in targets]
            server = fleet_server(links, labels, fleet, policy=policy, **options)
        server.stop_at, server.stop_reason = stop_at, bound_reason
        report = server.simulate(function, value, script, faults)
    finally:
        for session in sessions:
            session.shutdown()
        close_all()
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_timeline(Console(highlight=False, soft_wrap=True), report)
    if report.stopped == bound_reason:
        typer.echo(f"ryusen-conform: {bound_reason} reached", err=True)
    elif report.host_fault is not None:
        typer.echo(f"ryusen-conform: the host broke the protocol: {report.host_fault}", err=True)
    raise typer.Exit(0 if report.root.status == "completed" else 1)


# ----------------------------------------------------------------------------- rendering


def plain(value: Any) -> Any:
    """A tagged value in plain notation for people (bytes shown as text when UTF-8)."""
    if not isinstance(value, dict) or "t" not in value:
        return value
    kind, inner = value["t"], value.get("v")
    if kind == "object":
        return {key: plain(item) for key, item in inner.items()}
    if kind == "array":
        return [plain(item) for item in inner]
    if kind == "null":
        return None
    if kind == "bytes":
        data = base64.b64decode(inner)
        try:
            return f"b'{data.decode('utf-8')}'" if len(data) <= 200 else f"<{len(data)} bytes>"
        except UnicodeDecodeError:
            return f"<{len(data)} bytes>"
    if kind in ("i64", "u64"):
        return int(inner)
    return inner


def _short(document: Any, limit: int = 90) -> str:
    text = json.dumps(document, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Timeline rows printed at most (the first and last half): a run a bound stopped can hold
#: tens of thousands, and drawing them took longer than the run's own --max-time.
SHOWN_ROWS = 200


def print_timeline(console: Console, report: RunReport) -> None:
    traced = any(entry.trace is not None for entry in report.timeline.entries)
    table = Table(title="timeline (virtual ms)", title_justify="left", expand=False)
    columns = ("ms", "run", "invocation", "answer") + (("callbacks started",) if traced else ())
    for column in columns:
        table.add_column(column, no_wrap=column not in ("answer", "callbacks started"))
    styles = {"completed": "green", "failed": "red", "lost": "yellow", "killed": "yellow"}
    entries = list(report.timeline.entries)
    for index, entry in enumerate(entries):
        if len(entries) > SHOWN_ROWS and index == SHOWN_ROWS // 2:  # the middle of a long run
            hidden = len(entries) - SHOWN_ROWS
            gap = Text(f"… {hidden} entries not shown (--json prints every one)", style="dim")
            table.add_row("…", "", gap, "", *([""] if traced else []))
        if len(entries) > SHOWN_ROWS and SHOWN_ROWS // 2 <= index < len(entries) - SHOWN_ROWS // 2:
            continue
        if entry.kind == "note":
            cells = [str(entry.at_ms), entry.run, Text(entry.text, style="dim"), ""]
            table.add_row(*cells, *([""] if traced else []))
            continue
        target = f" {entry.step} #{entry.attempt}" if entry.step is not None else ""
        answer = entry.answer + (f" {entry.detail}" if entry.detail else "")
        if entry.fault:
            answer += f" ({entry.fault})"
        style = next((s for word, s in styles.items() if word in answer), "")
        host = f" @{entry.host}" if entry.host is not None else ""
        cells = [str(entry.at_ms), entry.run, entry.mode + target + host, Text(answer, style=style)]
        table.add_row(*cells, *([", ".join(entry.started())] if traced else []))
    console.print(table)
    root = report.root
    line = f"run {report.aliases[root.run_id]} ({root.function_id}): {root.status}"
    if root.value is not None:
        line += f", value {_short(plain(root.value))}"
    if root.error is not None:
        line += f", error {root.error.get('category')}: {root.error.get('message')}"
    if root.compensated or root.skipped:
        line += f"; compensated: {', '.join(root.compensated) or 'none'}"
        line += f"; skipped: {', '.join(root.skipped) or 'none'}"
    console.print(line)
    if traced:
        counts = report.callbacks()
        console.print(
            "callbacks started: "
            + (", ".join(f"{key} ×{count}" for key, count in counts.items()) or "none")
        )
    console.print(
        f"{report.invocations} invocations, {report.elapsed_ms} virtual ms, "
        f"{len(report.events)} events accepted" + (f"; {report.stopped}" if report.stopped else "")
    )


def register_commands(app: typer.Typer) -> None:
    """Mount `simulate` on the main command line."""
    app.command("simulate")(simulate)
