"""What a handler can say about a message besides success."""

from __future__ import annotations


class RetryLater(Exception):
    """A transient failure (database away, a conflict): redeliver after ``delay_s``."""

    def __init__(self, reason: str, delay_s: float = 1.0) -> None:
        super().__init__(reason)
        self.delay_s = delay_s


class PoisonMessage(Exception):
    """The message can never be handled (malformed): terminate it, never redeliver."""
