"""Regenerate fakepeer/protocol/schemas/*.schema.json from the message catalog.

The catalog (fakepeer/protocol/messages.py: kinds, directions, sections; shapes.py: body shapes)
is the one source of message shapes. Edit it, then run this; `--check` exits 1 naming stale files.
"""

from __future__ import annotations

import argparse
import sys

from fakepeer.protocol.schemagen import SCHEMA_DIR, stale_files, write_schemas


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Exit 1 when a file is stale.")
    args = parser.parse_args()
    if args.check:
        problems = stale_files()
        for problem in problems:
            print(f"{SCHEMA_DIR}/{problem}", file=sys.stderr)
        if problems:
            print("run `python scripts/generate_schemas.py`", file=sys.stderr)
            return 1
        print(f"{SCHEMA_DIR} matches the catalog")
        return 0
    written = write_schemas()
    print(f"wrote {len(written)} schemas to {SCHEMA_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
