"""What a JetStream consumer is made of, besides the runner that drives it: its settings
(:class:`ConsumerSpec`), one delivery as a handler sees it (:class:`Delivery`), the handler
and probe signatures, and where given-up events go (:class:`DeadLetterSink`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from cairn.config import EventSettings
from cairn.events.outcomes import PoisonMessage
from cairn.events.payloads import event_summary


@dataclass(frozen=True)
class ConsumerSpec:
    durable: str
    concurrency: int  # messages handled at once by this process
    ack_wait_s: float
    max_deliveries: int  # deliveries before a dead letter; an outage waited out is not one
    outage_max_backoff_s: float = 10.0
    max_ack_pending: int | None = None  # across every process; JetStream's default if None
    defect_delay_s: float = 2.0  # before delivery n+1 after a defect: this x 2^(n-1), capped

    @classmethod
    def from_settings(
        cls, durable: str, concurrency: int, ack_wait_s: float, settings: EventSettings
    ) -> ConsumerSpec:
        return cls(
            durable=durable,
            concurrency=max(1, concurrency),
            ack_wait_s=ack_wait_s,
            max_deliveries=settings.consumer_max_deliveries,
            outage_max_backoff_s=settings.consumer_outage_max_backoff_s,
        )


@dataclass(frozen=True)
class Delivery:
    """One delivery of one stream message, as a handler sees it."""

    subject: str
    data: bytes
    stream_sequence: int
    deliveries: int  # 1 on the first delivery
    headers: Mapping[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any] | None:
        """The event's tenant and schema from its headers, without parsing it (None when
        the message does not carry them: ``events.payloads.event_summary``)."""
        return event_summary(self.headers)

    def event(self) -> dict[str, Any]:
        """The event as a JSON object; a message that is not one is poison."""
        try:
            event = json.loads(self.data)
        except ValueError as error:
            raise PoisonMessage(f"not JSON: {error}") from error
        if not isinstance(event, dict):
            raise PoisonMessage("not a JSON object")
        return event


Handler = Callable[[Delivery], Awaitable[None]]
Probe = Callable[[], Awaitable[None]]  # raises while the handler's dependency is unreachable


class DeadLetterSink(Protocol):
    async def record(self, consumer: str, delivery: Delivery, reason: str) -> None: ...
