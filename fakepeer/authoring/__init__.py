"""Fixture authoring: validate, format, scaffold and record fixtures; the matrix and rule coverage."""
