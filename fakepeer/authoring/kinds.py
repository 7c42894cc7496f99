"""Which message kinds a fixture may send and expect, from the §14 catalog's directions.

A fixture plays the server and the bench: it sends S→W and B→H kinds and expects W→S and H→B
kinds (`protocol_error` goes both ways). An unknown kind on purpose belongs in `send_raw`.
"""

from __future__ import annotations

from fakepeer.protocol.messages import KINDS
from fakepeer.protocol.version import CAPABILITIES

CAPABILITIES_1_0 = frozenset(CAPABILITIES)
#: Capabilities of the transport, not of registration (D-HTTP-AUTH): the HTTP transport has
#: `http`; an endpoint that authenticates requests adds `request_authentication`.
TRANSPORT_CAPABILITIES = frozenset({"http", "request_authentication"})

SEND_KINDS = frozenset(
    name for name, kind in KINDS.items() if kind.direction in ("S->W", "B->H", "both")
)
EXPECT_KINDS = frozenset(
    name for name, kind in KINDS.items() if kind.direction in ("W->S", "H->B", "both")
)
