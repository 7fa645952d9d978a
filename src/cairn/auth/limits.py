"""Per-caller limits held in process: a request rate (token bucket) and open SSE connections.

A caller is a (tenant, agent) pair, so minting more tokens for one agent does not buy more.
Each server process counts on its own; behind N servers the effective limits are N times.
"""

from __future__ import annotations

import math
import time
import uuid
import weakref
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


class Slot:
    """One open connection of a caller. Released explicitly when the connection ends, or
    when it is garbage-collected (a response dropped before it ever started streaming)."""

    __slots__ = ("__weakref__", "key", "limiter")

    def __init__(self, limiter: ConnectionLimiter, key: CallerKey) -> None:
        self.limiter = limiter
        self.key = key

    def release(self) -> None:
        """Give the slot back; calling it again does nothing."""
        self.limiter.discard(self)


class ConnectionLimiter:
    """At most ``limit`` open connections per caller (0: no cap)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[CallerKey, weakref.WeakSet[Slot]] = {}

    def acquire(self, key: CallerKey) -> Slot:
        """A slot for one more connection of ``key``, or 429 when it has ``limit`` open."""
        slots = self._open.setdefault(key, weakref.WeakSet())
        if self.limit and len(slots) >= self.limit:
            raise TooManyRequests(
                f"at most {self.limit} open event streams per caller",
                headers={"Retry-After": "1"},
            )
        slot = Slot(self, key)
        slots.add(slot)
        if len(self._open) > MAX_TRACKED:
            for idle in [k for k, open_slots in self._open.items() if not open_slots]:
                del self._open[idle]
        return slot

    def discard(self, slot: Slot) -> None:
        slots = self._open.get(slot.key)
        if slots is not None:
            slots.discard(slot)
            if not slots:
                del self._open[slot.key]

    def open_count(self, key: CallerKey) -> int:
        return len(self._open.get(key, ()))
