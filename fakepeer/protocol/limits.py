"""The §4.3 limits as named numbers, so every check in the bench cites the same bound."""

from __future__ import annotations

MIB = 1024 * 1024

#: Largest frame payload (§1); a larger announced length breaks the stream.
MAX_FRAME_BYTES = 16 * MIB
#: Largest payload of one `invoke` frame (execution request).
MAX_REQUEST_BYTES = 4 * MIB
#: Most history entries in one `invoke` (replay bound).
MAX_HISTORY_ENTRIES = 1024
#: Longest canonical encoding of one value.
MAX_VALUE_BYTES = 1 * MIB
#: Deepest value nesting; a value of this depth is accepted, one deeper is refused.
MAX_DEPTH = 64

#: Integer domains (§3.1).
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
U64_MAX = 2**64 - 1
#: Longest envelope `id` (§2), in characters.
MAX_ID_CHARS = 256

#: Deepest JSON nesting (objects and arrays) the bench decodes in a frame or a fixture file.
#: The deepest legal message holds a value of depth 64, two JSON levels per value level, inside
#: a handful of message levels (about 135 in all); error cause chains are the only other deep
#: structure. Anything deeper is refused before a parser or any recursive walk sees it.
MAX_JSON_NESTING = 256
