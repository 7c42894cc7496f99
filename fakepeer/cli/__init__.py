"""The `ryusen-conform` command line, one module per command (run, merge, schema) beside the
shared options (options.py), the output loop they end through (outputs.py), the application
that mounts them and the commands of other packages (commands.py) and the program (entry.py).

Exit status: 0 when every required case passes or is a known failure, 1 on failures, 2 on usage
or fixture errors, 3 when the bench itself failed on a case (an internal error: no verdict), 130
when a signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) interrupted the run. After a run, the last line
printed is exactly `N passed, N failed` (then `, N errors`, `, N skipped`, `, N xfailed`,
`, N xpassed` and `, N known-failure list errors` when there are any), for CI systems to read.
"""

from __future__ import annotations

from fakepeer.cli.commands import app
from fakepeer.cli.entry import main
from fakepeer.cli.help import plain_help as _plain_help
from fakepeer.cli.options import UsageProblem

__all__ = ["UsageProblem", "_plain_help", "app", "main"]
