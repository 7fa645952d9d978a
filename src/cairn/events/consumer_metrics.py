"""What every JetStream consumer run by :mod:`cairn.events.consumer` reports on ``/metrics``,
labelled by consumer (``worker``, ``webhooks``...)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

MESSAGES = Counter(
    "cairn_consumer_messages_total",
    "Messages handled by a JetStream consumer, by outcome",
    ["consumer", "outcome"],
)
DEAD_LETTERS = Counter(
    "cairn_consumer_dead_letters_total",
    "Events a consumer gave up on and recorded as dead letters",
    ["consumer"],
)
OUTAGES = Counter(
    "cairn_consumer_outages_total", "Dependency outages a consumer waited out", ["consumer"]
)
HELD = Gauge(
    "cairn_consumer_held_messages",
    "Messages held in place while a dependency is unreachable",
    ["consumer"],
)
