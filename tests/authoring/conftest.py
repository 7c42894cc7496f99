"""Pytest fixtures for the authoring-tool tests: a CLI runner and the main app."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture()
def app():
    from fakepeer.cli import app as main_app

    return main_app
