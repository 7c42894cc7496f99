"""The oracle: an executable reading of the SDK rules (protocol §9-§11, host-contract §12.4-§13).

Given one well-formed `invoke` (function, input, history, mode, target) and the host's ambient
state, `expect_invoke` computes the answer an SDK must give and the effect trace it must show.
It is written from the text, shares no code with runners/, and uses only `fakepeer.protocol`.
"""

from fakepeer.oracle.compare import answer_difference
from fakepeer.oracle.model import Ambient, Expectation, Unmodeled
from fakepeer.oracle.registry import FUNCTIONS, expect_invoke
from fakepeer.oracle.trace import trace_difference

__all__ = [
    "FUNCTIONS",
    "Ambient",
    "Expectation",
    "Unmodeled",
    "answer_difference",
    "expect_invoke",
    "trace_difference",
]
