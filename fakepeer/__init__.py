"""ryusen-conform: the language-neutral conformance bench for the Ryusen execution protocol."""

__version__ = "0.1.0"
