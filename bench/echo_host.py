#!/usr/bin/env python3
"""The raw baseline: echo every frame back unchanged (no JSON, no validation)."""

import sys

IN = sys.stdin.buffer
OUT = sys.stdout.buffer


def main():
    while True:
        header = IN.read(4)
        if len(header) < 4:
            return 0
        OUT.write(header + IN.read(int.from_bytes(header, "big")))
        OUT.flush()


if __name__ == "__main__":
    sys.exit(main())
