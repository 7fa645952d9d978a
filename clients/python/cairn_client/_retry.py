"""When to try a call again: 429 and 503 only, after the server's ``Retry-After`` (else a
capped exponential backoff with jitter), a bounded number of times, and only for calls
that are safe to repeat — idempotent methods, or creates carrying an ``Idempotency-Key``
(a batch: one per record), whose repeat the server answers with the first result instead
of a second record.

No I/O here: both clients ask ``delay`` and sleep in their own way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

RETRIED_STATUSES = frozenset({429, 503})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` counts the first try; ``max_delay_s`` also bounds a ``Retry-After``: a
    server that asks for a longer wait gets its error raised instead."""

    attempts: int = 4
    backoff_s: float = 0.25
    max_delay_s: float = 30.0

    def delay(self, request: httpx.Request, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None``: raise the error."""
        if response.status_code not in RETRIED_STATUSES or attempt >= self.attempts:
            return None
        if not repeatable(request):
            return None
        asked = retry_after_s(response.headers.get("retry-after"))
        if asked is None:
            backoff = min(self.max_delay_s, self.backoff_s * 2.0 ** (attempt - 1))
            return backoff * random.uniform(0.5, 1.0)
        return asked if asked <= self.max_delay_s else None


NO_RETRY = RetryPolicy(attempts=1)


# Every record of a batch the client sends carries an idempotency key (``keyed_record``).
KEYED_BATCH_PATHS = frozenset({"/breadcrumbs/batch"})


def repeatable(request: httpx.Request) -> bool:
    return (
        request.method in IDEMPOTENT_METHODS
        or "idempotency-key" in request.headers
        or request.url.path in KEYED_BATCH_PATHS
    )


def retry_after_s(value: Any, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds, or an HTTP date (RFC 9110)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
