"""What a consumer's handler can say about a message besides success.

A handler returns normally when the message is done (acknowledged), or raises:

- :class:`PoisonMessage`: it can never be handled (malformed): recorded as a dead letter,
  never redelivered;
- :class:`DependencyDown`, or any error :func:`is_outage` recognises, *and* the consumer's
  probe confirms it: PostgreSQL (or another dependency) is unreachable. Not the message's
  fault: the runner retries the same message in place, with capped exponential backoff, and
  fetches nothing new meanwhile, so an outage never counts against its delivery limit (an
  error that looks like an outage while the probe succeeds is treated as a defect, so a
  misread error cannot hold a message forever);
- :class:`RetryLater`: a transient failure of this message (a conflict): redelivered after
  ``delay_s``; counts as a delivery;
- anything else: a defect. Redelivered with backoff until the delivery limit, then recorded
  as a dead letter.
"""

from __future__ import annotations

from cairn.db.errors import is_unavailable


class RetryLater(Exception):
    """A transient failure of this message: redeliver after ``delay_s``."""

    def __init__(self, reason: str, delay_s: float = 1.0) -> None:
        super().__init__(reason)
        self.delay_s = delay_s


class PoisonMessage(Exception):
    """The message can never be handled (malformed): terminate it, never redeliver."""


class DependencyDown(Exception):
    """A dependency the handler needs is unreachable; the message itself is fine."""


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says a dependency is unreachable rather than that the work is wrong
    (:func:`cairn.db.errors.is_unavailable` for the database)."""
    return isinstance(error, DependencyDown) or is_unavailable(error)
