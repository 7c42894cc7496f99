"""Fixture authoring: validate, format, scaffold and record fixtures; matrix and rule coverage."""
