"""The committed corpus: every fixture validates, is formatted, and matrix.json is fresh."""

from __future__ import annotations

from fakepeer.authoring.formatting import format_text
from fakepeer.authoring.matrix import build_matrix, default_matrix_path, render_matrix, stale_reason
from fakepeer.authoring.validate import validate_paths
from fakepeer.cases import fixture_files, repository_root


def test_every_fixture_validates() -> None:
    count, problems = validate_paths([repository_root() / "fixtures"])
    assert count > 0
    assert not problems, "\n".join(map(str, problems))


def test_every_fixture_is_formatted() -> None:
    unformatted = [
        str(path)
        for path in fixture_files([repository_root() / "fixtures"])
        if format_text(path.read_text(encoding="utf-8")) != path.read_text(encoding="utf-8")
    ]
    assert not unformatted, "run `ryusen-conform fixtures fmt`: " + ", ".join(unformatted)


def test_matrix_is_fresh() -> None:
    reason = stale_reason(default_matrix_path(), render_matrix(build_matrix()))
    assert reason is None, reason
