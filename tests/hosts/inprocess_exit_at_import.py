"""Hostile in-process host (`--sdk python:tests/hosts:inprocess_exit_at_import:serve`): its
module calls `sys.exit(0)` as it is imported, which ended the bench with status 0."""

import sys

sys.exit(0)


def serve(reader: object, writer: object) -> int:  # never reached
    return 0
