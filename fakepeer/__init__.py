"""ryusen-conform: the language-neutral conformance bench for the Ryusen execution protocol."""

#: The package version (semantic versioning, CHANGELOG.md); pyproject.toml says the same.
__version__ = "0.5.0.dev0"
