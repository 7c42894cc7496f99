"""`python -m fakepeer` is `ryusen-conform`."""

from fakepeer.cli import entry

entry()
