"""The protocol model: the one written definition of the RFD 2 wire contract (docs/protocol.md).

Nothing outside this package may redefine an encoding rule; the transport, session, fixtures,
reports and CLI all build on it.

- `limits`: the §4.3 numbers.        - `canonical`: RFC 8785 bytes and `sha256:` hashes (§4).
- `values`: the tagged value model, Python conversion, `$plain` notation (§3).
- `json_convenience`: JSON documents to and from bytes (§3.6).
- `errors`: error records and reserved categories (§5).
- `durations`: author durations to wire millisecond counts (§6).
- `messages`: the §14 catalog, one row per kind (data); `message_kind`: what a row holds;
  `shapes`: each kind's body schema and the shared definitions (data); `value_paths`: where a
  kind's tagged values sit.
- `encode`: envelopes built and encoded, fixed frames as byte templates (§1, §2).
- `frame_json`: a frame payload read as strict JSON (§2 step 1).
- `schema`: per-kind JSON Schemas and the fast `validate_message`.
- `decode`: the full §2 decoding order (steps 1-4: `parse_envelope`) with the
  `protocol_error` category and pointer.
- `manifest`: manifests, identities and the server's publication model (§7.1, §8).
"""
