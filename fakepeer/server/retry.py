"""Retry policy: the declared retry metadata turned into the server's next-attempt decision.

RFD 2: "The server owns run state, scheduling, retries, ..." and a step declaration carries
"retry metadata" (`{"max_attempts", "backoff_ms"}`, protocol §10.1). RFD 2 fixes no backoff curve;
the model server waits the declared `backoff_ms` before every next attempt (constant backoff, see
docs/server.md), so scenario times are easy to reason about.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Protocol §10.1: the retry an author who declares none gets.
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_MS = 1000
#: How long the server waits before offering work again after `admission_refused` (docs/server.md).
ADMISSION_RETRY_MS = 1000


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_ms: int = DEFAULT_BACKOFF_MS

    @classmethod
    def from_declaration(cls, retry: object) -> RetryPolicy:
        """The policy a `step` declaration's `retry` member asks for."""
        if not isinstance(retry, dict):
            return cls()
        return cls(int(retry.get("max_attempts", DEFAULT_MAX_ATTEMPTS)), int(retry["backoff_ms"]))

    def retries_after(self, attempt: int, error: dict | None) -> bool:
        """Whether a failed `attempt` gets another one: a retryable failure with attempts left.

        An error record whose `retryable` flag is false is terminal at once (protocol §5.1).
        """
        if error is not None and error.get("retryable") is False:
            return False
        return attempt < self.max_attempts

    def delay_before(self, attempt: int) -> int:
        """Virtual milliseconds to wait before dispatching `attempt` (> 1)."""
        return self.backoff_ms
