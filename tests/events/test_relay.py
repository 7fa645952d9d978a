"""The outbox relay against real NATS: every committed change reaches JetStream once, in
order, also across a NATS outage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from fastapi import FastAPI
from nats.js.api import ConsumerConfig, DeliverPolicy
from tests.conftest import Services
from tests.factories import breadcrumb

from cairn.events.payloads import STREAM_NAME, event_summary


async def _stream_events(app: FastAPI, marker: str, start_seq: int, expected: int) -> list[Any]:
    """Every event in the stream from ``start_seq`` whose tags carry ``marker``."""
    js = app.state.resources.nats.jetstream()
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start_seq)
    subscription = await js.subscribe(
        "bc.>", stream=STREAM_NAME, ordered_consumer=True, config=config
    )
    found: list[Any] = []
    try:
        while True:
            try:
                message = await subscription.next_msg(timeout=2)
            except TimeoutError:
                break
            event = json.loads(message.data)
            if marker in event["tags"]:
                found.append((message, event))
            if len(found) > expected:
                break
    finally:
        await subscription.unsubscribe()
    return found


async def _last_seq(app: FastAPI) -> int:
    js = app.state.resources.nats.jetstream()
    return int((await js.stream_info(STREAM_NAME)).state.last_seq)


async def _pending(app: FastAPI) -> int:
    async with app.state.resources.system_engine.connect() as connection:
        from sqlalchemy import text

        query = text("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        return int((await connection.execute(query)).scalar_one())


async def _drained(app: FastAPI, timeout: float = 20) -> None:
    for _ in range(int(timeout * 10)):
        if await _pending(app) == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the outbox was not drained")


async def test_event_is_published_with_its_id_as_msg_id(
    client: httpx.AsyncClient, app: FastAPI, marker: str
) -> None:
    start = await _last_seq(app) + 1
    created = (await client.post("/breadcrumbs", json=breadcrumb(tags=[marker]))).json()
    await _drained(app)
    ((message, event),) = await _stream_events(app, marker, start, 1)
    assert message.subject == f"bc.{created['id']}.created"
    assert message.headers["Nats-Msg-Id"] == event["event_id"]
    assert event["breadcrumb_id"] == created["id"] and event["version"] == 1
    # The tenant and schema, for consumers that need no more (events.payloads).
    assert event_summary(message.headers) == {
        "owner_id": event["owner_id"],
        "schema_name": event["schema_name"],
    }


async def test_nats_outage_loses_nothing_and_keeps_order(
    client: httpx.AsyncClient, app: FastAPI, services: Services, marker: str
) -> None:
    start = await _last_seq(app) + 1
    services.nats.stop()
    try:
        ids = []
        for i in range(200):
            response = await client.post(
                "/breadcrumbs", json=breadcrumb(tags=[marker], title=f"n{i}")
            )
            assert response.status_code == 201
            ids.append(response.json()["id"])
        assert await _pending(app) >= 200
        assert (await client.get("/ready")).status_code == 503
    finally:
        services.nats.start()
    await _drained(app, timeout=30)
    events = [event for _, event in await _stream_events(app, marker, start, 200)]
    assert [event["breadcrumb_id"] for event in events] == ids  # all, in order, once
