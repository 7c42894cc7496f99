"""Help that names values as people do (`--out PATH`, `--sdk CMD`), the same way in every
command, whichever package mounts it."""

from __future__ import annotations

#: One metavar per kind of value, for options that name none (every command mounts its own
#: options; `--sdk CMD` everywhere, never `--sdk SDK`, `--output OUTPUT` or `--wait WAIT`).
METAVARS = {
    "sdk": "CMD",
    "out": "PATH",
    "output": "PATH",
    "fixtures": "PATH",
    "source": "FILE",
    "directory": "DIR",
    "category": "NAME",
    "wait": "SECONDS",
    "timeout": "SECONDS",
    "max_time": "SECONDS",
    "examples": "N",
    "seed": "N",
    "whole_runs": "N",
    "max_invocations": "N",
    "event": "AT=NAME:PAYLOAD",
    "fault": "SPEC",
    "ambient": "KEY=VALUE",
    "worker": "SPEC",
    "paths": "PATH",
}


def plain_help(command: object) -> None:
    """Help that names values as people do: `--out PATH`, never `<path>`, `<list[str]>` or
    `<float range> [x>=0.001]` (typer's type labels), and a required argument as `ID`, not
    `{ID}`; ranges are still enforced."""
    for param in getattr(command, "params", ()):
        if param.metavar is None and param.name in METAVARS and not getattr(param, "is_flag", 0):
            param.metavar = METAVARS[param.name]
        if getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = lambda ctx: None
            name = param.metavar or param.name.upper()
            usage = (name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else "")
            param._usage_display_name = lambda usage=usage: usage  # typer 0.29's usage line
            param.get_usage_pieces = lambda ctx, usage=usage: [usage]  # and typer 0.28's
        else:
            label = param.metavar or param.name.upper()
            param.display_type_rich = lambda ctx, label=label: label
        param._get_number_range_help_str = lambda: None
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)
