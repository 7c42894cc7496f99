"""Transports to an SDK: framing, a subprocess host, and an in-memory mock."""

from fakepeer.transport.base import Transport
from fakepeer.transport.errors import FrameError, TransportClosed, TransportError, TransportTimeout
from fakepeer.transport.framing import FrameDecoder, encode_frame
from fakepeer.transport.mock import MockTransport, json_handler
from fakepeer.transport.process import CommandError, SubprocessTransport, close_all, parse_command

__all__ = [
    "CommandError",
    "FrameDecoder",
    "FrameError",
    "MockTransport",
    "SubprocessTransport",
    "Transport",
    "TransportClosed",
    "TransportError",
    "TransportTimeout",
    "close_all",
    "encode_frame",
    "json_handler",
    "parse_command",
]
