"""Where events are published: JetStream, or an in-memory twin for fast unit tests."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple, Protocol

from nats.js import JetStreamContext
from nats.js.api import PubAck
from nats.js.errors import NoStreamResponseError

from cairn.config import EventSettings
from cairn.events.stream_setup import ensure_stream

log = logging.getLogger(__name__)


class Outgoing(NamedTuple):
    subject: str
    payload: bytes
    msg_id: str
    headers: Mapping[str, str] = MappingProxyType({})  # besides the message id


class Broker(Protocol):
    async def publish(self, subject: str, payload: bytes, msg_id: str) -> int:
        """Publish once (deduplicated by ``msg_id``); returns the stream sequence."""
        ...

    async def publish_batch(self, messages: Sequence[Outgoing]) -> int:
        """Publish in order, once each; returns how many from the start were acknowledged
        (the rest are published again later, and deduplicated by their ``msg_id``)."""
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

    async def publish_batch(self, messages: Sequence[Outgoing]) -> int:
        """Pipelined: every message goes out on the one connection, in order, before any ack
        is awaited. JetStream stores them in the order they arrive, so a failure leaves an
        acknowledged prefix; only that prefix counts, and a later message that was stored
        anyway is dropped as a duplicate when the rest is published again."""
        try:
            return await self._pipelined(messages)
        except NoStreamResponseError:  # a fresh NATS: declare the stream, then publish
            await ensure_stream(self.js, self.settings)
            return await self._pipelined(messages)

    async def _pipelined(self, messages: Sequence[Outgoing]) -> int:
        acks: list[asyncio.Future[PubAck]] = []
        try:
            for subject, payload, msg_id, more in messages:
                headers = {**more, "Nats-Msg-Id": msg_id}
                acks.append(await self.js.publish_async(subject, payload, headers=headers))
        except Exception as error:  # the connection went away: what was sent may be acked
            log.warning("publishing stopped after %d of %d (%s)", len(acks), len(messages), error)
        try:
            if acks:
                await asyncio.wait(acks, timeout=self.timeout_s)
        finally:
            for ack in acks:
                ack.cancel()  # no-op once done; frees the slots of acks that never came
        return _acknowledged_prefix(acks)


def _acknowledged_prefix(acks: Sequence[asyncio.Future[PubAck]]) -> int:
    """How many acks from the start succeeded (every failure is looked at, so none goes
    unretrieved)."""
    prefix: int | None = None
    for done, ack in enumerate(acks):
        error = asyncio.CancelledError() if ack.cancelled() else ack.exception()
        if error is not None and prefix is None:
            prefix = done
            if done == 0 and isinstance(error, NoStreamResponseError):
                raise error
            log.warning("publishing an outbox event failed (%r); will retry", error)
    return len(acks) if prefix is None else prefix


@dataclass
class InMemoryBroker:
    """Keeps what was published, deduplicating by message id like JetStream does."""

    messages: list[tuple[str, bytes, str]] = field(default_factory=list)
    headers: dict[str, Mapping[str, str]] = field(default_factory=dict)  # by message id
    fail: bool = False
    fail_after: int | None = None  # a batch stops (as if NATS went away) after this many

    async def publish_batch(self, messages: Sequence[Outgoing]) -> int:
        for count, (subject, payload, msg_id, headers) in enumerate(messages):
            if self.fail or count == self.fail_after:
                return count
            await self.publish(subject, payload, msg_id)
            self.headers.setdefault(msg_id, headers)
        return len(messages)

    async def publish(self, subject: str, payload: bytes, msg_id: str) -> int:
        if self.fail:
            raise ConnectionError("broker unavailable")
        seen = [i for i, (_, _, known) in enumerate(self.messages) if known == msg_id]
        if seen:
            return seen[0] + 1
        self.messages.append((subject, payload, msg_id))
        return len(self.messages)
