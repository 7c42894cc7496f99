"""The protocol model: the one written definition of the RFD 2 wire contract (docs/protocol.md).

Nothing outside this package may redefine an encoding rule; the transport, session, fixtures,
reports and CLI all build on it.
"""
