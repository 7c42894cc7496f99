"""The protocol model: the one written definition of the RFD 2 wire contract (docs/protocol.md).

Nothing outside this package may redefine an encoding rule; the transport, session, fixtures,
reports and CLI all build on it.

- `limits`: the §4.3 numbers.        - `canonical`: RFC 8785 bytes and `sha256:` hashes (§4).
- `values`: the tagged value model, Python conversion, `$plain` notation (§3).
- `json_convenience`: JSON documents to and from bytes (§3.6).
- `errors`: error records and reserved categories (§5).
- `durations`: author durations to wire millisecond counts (§6).
- `messages`: the §14 catalog and envelope decoding (§2 steps 1-4).
- `schema`: per-kind JSON Schemas and the fast `validate_message`.
- `decode`: the full §2 decoding order with the `protocol_error` category and pointer.
- `manifest`: manifests, identities and the server's publication model (§7.1, §8).
"""
