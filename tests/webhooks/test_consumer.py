"""The JetStream side: one durable consumer shared by every process, acknowledged after
delivery, and delivery resuming after NATS restarts."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from nats.js.api import AckPolicy
from tests.conftest import Services
from tests.waiting import eventually
from tests.webhooks.receiver import Receiver
from tests.webhooks.test_delivery import post, register

from cairn.events.payloads import STREAM_NAME
from cairn.webhooks.worker import CONSUMER


async def test_durable_consumer_acknowledges_after_delivery(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    js = app.state.resources.nats.jetstream()
    await register(client, receiver.url, {"any_tags": [marker]})

    await post(client, marker)
    await eventually(lambda: len(receiver.requests) == 1)

    async def settled() -> bool:
        info = await js.consumer_info(STREAM_NAME, CONSUMER)
        return bool(info.num_ack_pending == 0 and info.num_pending == 0)

    await eventually(settled)
    info = await js.consumer_info(STREAM_NAME, CONSUMER)
    assert info.config.ack_policy == AckPolicy.EXPLICIT and info.config.durable_name == CONSUMER


async def test_delivery_resumes_after_nats_restarts(
    app: FastAPI, services: Services, client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    await register(client, receiver.url, {"any_tags": [marker]})
    await post(client, marker, "before")
    await eventually(lambda: len(receiver.tagged("before")) == 1)

    services.nats.stop()
    try:
        await eventually(lambda: not app.state.resources.nats.connected)
        await post(client, marker, "during")  # waits in the outbox
    finally:
        services.nats.start()

    await eventually(lambda: len(receiver.tagged("during")) == 1, timeout=15)
    assert len(receiver.requests) == 2


async def test_a_deleted_consumer_is_recreated_where_it_was(
    app: FastAPI, client: httpx.AsyncClient, receiver: Receiver, marker: str
) -> None:
    js = app.state.resources.nats.jetstream()
    await register(client, receiver.url, {"any_tags": [marker]})
    await post(client, marker, "before")
    await eventually(lambda: len(receiver.tagged("before")) == 1)

    await js.delete_consumer(STREAM_NAME, CONSUMER)
    await post(client, marker, "after")  # published before the consumer exists again

    await eventually(lambda: len(receiver.tagged("after")) == 1)
