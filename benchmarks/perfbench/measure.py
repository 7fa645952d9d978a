"""What both pipelines share: percentiles, phase samples, and the publish probe.

"publish" is measured the same way for Cairn and the baseline: from the commit of the
``agent.context.v1`` write until its event arrives on NATS (a plain subscriber on
``bc.<id>.*``), through the running server's outbox relay — the path every SSE subscriber
and webhook sees.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from typing import Any

import nats

PHASES = [
    "agent_match",
    "trigger",
    "seeds",
    "seeds_always",
    "seeds_semantic",
    "seeds_session",
    "graph",
    "render_items",
    "select",
    "render",
    "write",
    "publish",
]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return 0.0
    rank = p * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(samples, 0.50), 3),
        "p95": round(percentile(samples, 0.95), 3),
        "p99": round(percentile(samples, 0.99), 3),
        "mean": round(sum(samples) / max(1, len(samples)), 3),
        "n": len(samples),
    }


class Samples:
    """Per-phase and end-to-end samples of one pipeline."""

    def __init__(self) -> None:
        self.phases: dict[str, list[float]] = defaultdict(list)
        self.e2e_committed: list[float] = []
        self.e2e_published: list[float] = []

    def add(self, phases: dict[str, float], committed_ms: float) -> None:
        """``committed_ms``: wall time from the event to the committed write."""
        for name, value in phases.items():
            self.phases[name].append(value)
        self.e2e_committed.append(committed_ms)
        self.e2e_published.append(committed_ms + phases.get("publish", 0.0))

    def report(self) -> dict[str, Any]:
        return {
            "e2e_ms": summary(self.e2e_committed),
            "e2e_published_ms": summary(self.e2e_published),
            "phases_ms": {
                name: summary(self.phases[name]) for name in PHASES if name in self.phases
            },
        }


class PublishProbe:
    """Every event's arrival time on NATS, by record id; subscribed before the writes."""

    def __init__(self, nats_url: str) -> None:
        self.nats_url = nats_url
        self._arrived: dict[str, float] = {}
        self._signals: dict[str, asyncio.Event] = {}
        self._client: Any = None

    async def start(self) -> None:
        self._client = await nats.connect(self.nats_url)
        await self._client.subscribe("bc.>", cb=self._on_message)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def _on_message(self, message: Any) -> None:
        parts = message.subject.split(".")
        if len(parts) == 3:
            self._arrived[parts[1]] = time.perf_counter()
            signal = self._signals.pop(parts[1], None)
            if signal is not None:
                signal.set()

    async def publish_ms(
        self, record_id: uuid.UUID | str, write_started: float, committed_at: float
    ) -> float:
        """Milliseconds from ``committed_at`` until the record's first event since
        ``write_started`` arrived (NaN if none within 10 s). When the commit time is only
        known as the moment an HTTP response came back, the event may beat it: that is 0."""
        key = str(record_id)
        deadline = time.perf_counter() + 10
        while self._arrived.get(key, 0.0) < write_started:
            signal = self._signals.setdefault(key, asyncio.Event())
            try:
                await asyncio.wait_for(signal.wait(), max(0.0, deadline - time.perf_counter()))
            except TimeoutError:
                return float("nan")
        return max(0.0, (self._arrived[key] - committed_at) * 1000)
