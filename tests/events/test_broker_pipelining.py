"""Pipelined publishing: a batch goes out in order, acks are awaited together, and only the
acknowledged prefix counts (the rest is published again and deduplicated by msg id)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from fastapi import FastAPI
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy, PubAck, StreamConfig

from cairn.config import EventSettings
from cairn.events.broker import JetStreamBroker, Outgoing, _acknowledged_prefix


@pytest.fixture
async def stream(app: FastAPI) -> AsyncIterator[tuple[JetStreamContext, str]]:
    """A stream of its own, so the session's consumers never see these messages."""
    js = app.state.resources.nats.jetstream()
    name = f"PIPE{uuid.uuid4().hex[:8].upper()}"
    await js.add_stream(StreamConfig(name=name, subjects=[f"{name.lower()}.>"]))
    yield js, name
    await js.delete_stream(name)


def _batch(stream: str, count: int) -> list[Outgoing]:
    return [
        Outgoing(f"{stream.lower()}.{i}", b'{"n": %d}' % i, str(uuid.uuid4()), {"N": str(i)})
        for i in range(count)
    ]


async def _stored_ids(js: JetStreamContext, stream: str) -> list[str]:
    config = ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    subscription = await js.subscribe(
        f"{stream.lower()}.>", stream=stream, ordered_consumer=True, config=config
    )
    ids = []
    try:
        while True:
            try:
                message = await subscription.next_msg(timeout=0.5)
            except TimeoutError:
                return ids
            assert message.headers is not None
            assert message.headers["N"] == message.subject.rsplit(".", 1)[1]  # its own
            ids.append(message.headers["Nats-Msg-Id"])
    finally:
        await subscription.unsubscribe()


async def test_a_batch_is_stored_whole_and_in_order(stream: tuple[JetStreamContext, str]) -> None:
    js, name = stream
    batch = _batch(name, 300)
    assert await JetStreamBroker(js, EventSettings()).publish_batch(batch) == 300
    assert await _stored_ids(js, name) == [message.msg_id for message in batch]


async def test_publishing_a_batch_again_stores_nothing_twice(
    stream: tuple[JetStreamContext, str],
) -> None:
    js, name = stream
    broker, batch = JetStreamBroker(js, EventSettings()), _batch(name, 200)
    assert await broker.publish_batch(batch[:80]) == 80  # as if the rest had failed
    assert await broker.publish_batch(batch) == 200
    assert await _stored_ids(js, name) == [message.msg_id for message in batch]


async def test_only_the_acknowledged_prefix_counts() -> None:
    loop = asyncio.get_running_loop()

    def acks(*outcomes: str) -> list[asyncio.Future[PubAck]]:
        futures: list[asyncio.Future[PubAck]] = []
        for outcome in outcomes:
            future: asyncio.Future[PubAck] = loop.create_future()
            if outcome == "ok":
                future.set_result(PubAck(stream="S", seq=len(futures) + 1))
            elif outcome == "error":
                future.set_exception(TimeoutError())
            else:
                future.cancel()
            futures.append(future)
        return futures

    assert _acknowledged_prefix(acks("ok", "ok", "ok")) == 3
    assert _acknowledged_prefix(acks("ok", "error", "ok")) == 1
    assert _acknowledged_prefix(acks("ok", "ok", "cancelled")) == 2
    assert _acknowledged_prefix(acks()) == 0
