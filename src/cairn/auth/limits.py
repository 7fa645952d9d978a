"""Per-caller limits held in process: a request rate (token bucket) and open SSE connections.

A caller is a (tenant, agent) pair, so minting more tokens for one agent does not buy more.
Each server process counts on its own; behind N servers the effective limits are N times.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable

from cairn.errors import TooManyRequests

CallerKey = tuple[uuid.UUID, str]
# Buckets beyond this many are pruned of the full (idle) ones, so memory stays bounded.
MAX_TRACKED = 10_000


class RateLimiter:
    def __init__(
        self, rate_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate_per_s
        self.burst = float(burst)
        self.clock = clock
        self._buckets: dict[CallerKey, tuple[float, float]] = {}  # key -> (tokens, at)

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, key: CallerKey) -> None:
        """Spend one request of ``key``'s allowance or raise 429 with ``Retry-After``."""
        if not self.enabled:
            return
        now = self.clock()
        tokens, at = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = math.ceil((1.0 - tokens) / self.rate)
            raise TooManyRequests(
                f"rate limit of {self.rate:g} requests/s exceeded",
                headers={"Retry-After": str(max(1, wait))},
            )
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_TRACKED:
            self._prune(now)

    def _prune(self, now: float) -> None:
        for key, (tokens, at) in list(self._buckets.items()):
            if tokens + (now - at) * self.rate >= self.burst:
                del self._buckets[key]


class ConnectionLimiter:
    """At most ``limit`` open connections per caller (0: no cap)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[CallerKey, int] = {}

    def acquire(self, key: CallerKey) -> Callable[[], None]:
        """Count one connection; the returned function (idempotent) gives it back."""
        count = self._open.get(key, 0)
        if self.limit and count >= self.limit:
            raise TooManyRequests(
                f"at most {self.limit} open event streams per caller",
                headers={"Retry-After": "1"},
            )
        self._open[key] = count + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            remaining = self._open.get(key, 1) - 1
            if remaining <= 0:
                self._open.pop(key, None)
            else:
                self._open[key] = remaining

        return release

    def open_count(self, key: CallerKey) -> int:
        return self._open.get(key, 0)
