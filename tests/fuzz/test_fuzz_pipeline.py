"""Fuzz documents travel many per round trip; answers and counterexamples stay exact."""

from __future__ import annotations

import sys

from fakepeer.cases import repository_root
from fakepeer.fuzz import campaign
from fakepeer.fuzz.checks import _compare_values
from fakepeer.fuzz.echo import BATCH_BYTES, BATCH_FRAMES, EchoSession, _batches
from fakepeer.session import default_target
from fakepeer.session.targets import command_target

ROOT = repository_root()


def test_batches_keep_within_the_frame_count_and_byte_budget() -> None:
    frames = [(f"f{i}", b"x" * 10) for i in range(BATCH_FRAMES + 1)]
    assert [len(batch) for batch in _batches(frames)] == [BATCH_FRAMES, 1]
    big = [("a", b"x" * BATCH_BYTES), ("b", b"x"), ("c", b"x" * (BATCH_BYTES + 1))]
    assert [[ident for ident, _ in batch] for batch in _batches(big)] == [["a"], ["b"], ["c"]]
    assert _batches([]) == []


def test_echo_many_answers_each_document_in_order() -> None:
    session = EchoSession(default_target(), 10.0)
    try:
        docs = [{"t": "i64", "v": str(i)} for i in range(BATCH_FRAMES + 3)]
        replies = session.echo_many(docs)
        assert [reply.envelope["body"]["value"] for reply in replies] == docs  # type: ignore[union-attr]
        assert session.sent == len(docs)
    finally:
        session.close()


def test_a_break_inside_a_batch_leaves_the_rest_unanswered_then_caught_live() -> None:
    host = ROOT / "tests" / "hosts" / "crash_on_case.py"
    session = EchoSession(command_target(f"{sys.executable} {host} fuzz", cwd=ROOT), 5.0)
    try:
        assert session.echo_many([{"t": "null"}] * 3) == [None, None, None]
    finally:
        session.close()


def test_the_second_pass_sees_the_examples_the_first_collected() -> None:
    """The pipelined pass and the live pass draw the same examples from the same seed."""
    first: list[object] = []
    second: list[object] = []
    campaign._hypothesis("refusal", 40, 7, lambda case: first.append(campaign._key(case)))
    campaign._hypothesis("refusal", 40, 7, lambda case: second.append(campaign._key(case)))
    assert first == second and len(first) >= 40


def test_sorted_text_equality_is_not_python_equality() -> None:
    assert _compare_values({"t": "bool", "v": True}, {"t": "bool", "v": True}) is None
    assert _compare_values({"t": "bool", "v": True}, {"t": "bool", "v": 1}) is not None
    assert _compare_values({"v": "a", "t": "str"}, {"t": "str", "v": "a"}) is None
