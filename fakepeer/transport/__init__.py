"""Transports to an SDK host: the one contract (`base.Transport`) and what implements it.

- `process.SubprocessTransport`: a host program, frames on its stdin/stdout (`--sdk CMD`);
  `containment` finds every process it starts so none outlives the run.
- `inprocess.InProcessTransport`: a host written in Python, run on a thread of the bench
  (`--sdk python:[PATH:]MODULE:FUNCTION`), frames through in-memory pipes.
- `mock.MockTransport`: a Python callable answers each frame (tests).
- `http.HttpTransport`: request-response HTTP (docs/protocol.md §1.1): one envelope per POST,
  its answer in the response body, signed (`httpauth`); `--sdk http+cmd:COMMAND` starts a host
  that prints its URL, `--sdk http://127.0.0.1:PORT/PATH` uses a running endpoint.

The session layer sees only `Transport`: `send`/`send_many` and `receive` of whole payloads
with absolute deadlines, `close(wait=...)`, and optional `ready`, `capabilities`,
`exit_status`, `exit_note` and the `stderr` ring, which have defaults. A new kind of transport
is one new module here plus one branch in `session/targets.py` that picks it from the `--sdk`
text (ARCHITECTURE.md "A new transport", re-measured with HTTP).
"""

from fakepeer.transport.base import Transport
from fakepeer.transport.errors import FrameError, TransportClosed, TransportError, TransportTimeout
from fakepeer.transport.framing import FrameDecoder, encode_frame
from fakepeer.transport.inprocess import InProcessTransport
from fakepeer.transport.mock import MockTransport, json_handler
from fakepeer.transport.process import CommandError, SubprocessTransport, close_all, parse_command

__all__ = [
    "CommandError",
    "FrameDecoder",
    "FrameError",
    "InProcessTransport",
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
