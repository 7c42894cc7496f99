#!/usr/bin/env python3
"""A host whose admission is always closed: every invocation is refused before it starts, so
the model server offers it again and again until a bound stops the run (issue 36: printing the
timeline of such a run took 16 s past `simulate --max-time 3`)."""

import sys

from _base import serve


def hook(host: object, kind: str, frame_id: str) -> bool:
    host.admission_open = False  # type: ignore[attr-defined]
    return False


sys.exit(serve(hook))
