"""Where events are published: JetStream, or an in-memory twin for fast unit tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from nats.js import JetStreamContext
from nats.js.errors import NoStreamResponseError

from cairn.config import EventSettings
from cairn.events.stream_setup import ensure_stream


class Broker(Protocol):
    async def publish(self, subject: str, payload: bytes, msg_id: str) -> int:
        """Publish once (deduplicated by ``msg_id``); returns the stream sequence."""
        ...


class JetStreamBroker:
    def __init__(
        self, js: JetStreamContext, settings: EventSettings, *, timeout_s: float = 2.0
    ) -> None:
        self.js = js
        self.settings = settings
        self.timeout_s = timeout_s

    async def publish(self, subject: str, payload: bytes, msg_id: str) -> int:
        headers = {"Nats-Msg-Id": msg_id}
        try:
            ack = await self.js.publish(subject, payload, timeout=self.timeout_s, headers=headers)
        except NoStreamResponseError:  # a fresh NATS: declare the stream, then publish
            await ensure_stream(self.js, self.settings)
            ack = await self.js.publish(subject, payload, timeout=self.timeout_s, headers=headers)
        return int(ack.seq)


@dataclass
class InMemoryBroker:
    """Keeps what was published, deduplicating by message id like JetStream does."""

    messages: list[tuple[str, bytes, str]] = field(default_factory=list)
    fail: bool = False

    async def publish(self, subject: str, payload: bytes, msg_id: str) -> int:
        if self.fail:
            raise ConnectionError("broker unavailable")
        seen = [i for i, (_, _, known) in enumerate(self.messages) if known == msg_id]
        if seen:
            return seen[0] + 1
        self.messages.append((subject, payload, msg_id))
        return len(self.messages)
