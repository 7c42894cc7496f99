"""Length-prefixed framing (protocol §1)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakepeer.protocol.limits import MAX_FRAME_BYTES
from fakepeer.transport.errors import FrameError
from fakepeer.transport.framing import FrameDecoder, encode_frame


def test_encode_prefixes_big_endian_length() -> None:
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"


def test_encode_sends_an_empty_payload_and_refuses_an_oversized_one() -> None:
    # an empty payload is a fixture's deliberate fault (envelope.zero-length-frame-refused)
    assert encode_frame(b"") == b"\x00\x00\x00\x00"
    with pytest.raises(FrameError):
        encode_frame(b"x" * 11, limit=10)


def test_decoder_handles_partial_frames_byte_by_byte() -> None:
    decoder = FrameDecoder()
    stream = encode_frame(b"hello") + encode_frame(b"world!")
    frames = []
    for byte in stream:
        frames.extend(decoder.feed(bytes([byte])))
    assert frames == [b"hello", b"world!"]
    assert decoder.pending_bytes == 0


def test_decoder_returns_several_frames_from_one_chunk() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(encode_frame(b"a") + encode_frame(b"bb") + b"\x00\x00") == [b"a", b"bb"]
    assert decoder.pending_bytes == 2


def test_huge_announced_length_fails_without_buffering() -> None:
    decoder = FrameDecoder()
    with pytest.raises(FrameError, match="4294967295"):
        decoder.feed(struct.pack(">I", 0xFFFFFFFF) + b"x" * 1000)
    assert decoder.pending_bytes == 0
    with pytest.raises(FrameError):  # the stream stays broken
        decoder.feed(encode_frame(b"ok"))


def test_limit_is_sixteen_mib_inclusive() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(struct.pack(">I", MAX_FRAME_BYTES)) == []  # exactly the limit: accepted
    with pytest.raises(FrameError):
        FrameDecoder().feed(struct.pack(">I", MAX_FRAME_BYTES + 1))


def test_zero_length_is_a_frame_error() -> None:
    with pytest.raises(FrameError, match="length 0"):
        FrameDecoder().feed(b"\x00\x00\x00\x00")


def test_good_frames_before_a_bad_header_are_delivered_first() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(encode_frame(b"ok") + b"\x00\x00\x00\x00") == [b"ok"]
    with pytest.raises(FrameError):
        decoder.feed(b"")


@given(st.lists(st.binary(min_size=1, max_size=300), max_size=8), st.integers(1, 17))
def test_any_chunking_decodes_the_same_frames(payloads: list[bytes], chunk: int) -> None:
    stream = b"".join(encode_frame(payload) for payload in payloads)
    decoder = FrameDecoder()
    frames = []
    for start in range(0, len(stream), chunk):
        frames.extend(decoder.feed(stream[start : start + chunk]))
    assert frames == payloads


def test_decoder_copies_from_a_reused_read_buffer() -> None:
    # The subprocess transport reads into one buffer and feeds views of it.
    buffer = bytearray(encode_frame(b"first") + encode_frame(b"sec"))
    decoder = FrameDecoder()
    cut = len(encode_frame(b"first")) + 2
    frames = decoder.feed(memoryview(buffer)[:cut])
    buffer[:] = bytes(len(buffer))  # the next read overwrites the buffer
    frames += decoder.feed(memoryview(encode_frame(b"sec"))[2:])
    assert frames == [b"first", b"sec"]
    assert all(type(frame) is bytes for frame in frames)
