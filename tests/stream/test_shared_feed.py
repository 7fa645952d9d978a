"""The shared feed against the real server, NATS and PostgreSQL: one JetStream consumer for
all connections of the process, resumption across the replay → live switch, NATS restarts."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import httpx
from fastapi import FastAPI
from tests.conftest import Services
from tests.factories import breadcrumb
from tests.stream.sse_client import SseReader, sse
from tests.waiting import eventually

from cairn.events.payloads import STREAM_NAME

CONNECTIONS = 12  # under the per-caller cap of 16


async def _post(client: httpx.AsyncClient, **overrides: object) -> str:
    response = await client.post("/breadcrumbs", json=breadcrumb(**overrides))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def _consumers(app: FastAPI) -> set[str]:
    js = app.state.resources.nats.jetstream()
    return {info.name for info in await js.consumers_info(STREAM_NAME)}


async def test_many_connections_share_one_jetstream_consumer(
    live_url: str, app: FastAPI, client: httpx.AsyncClient, marker: str
) -> None:
    feed = app.state.resources.feed
    before = await _consumers(app)
    async with AsyncExitStack() as stack:
        streams: list[SseReader] = []
        for _ in range(CONNECTIONS):
            stream = await stack.enter_async_context(sse(live_url, {"any_tags": marker}))
            await stream.lines.__anext__()  # ": connected": it is on the feed
            streams.append(stream)
        new = await _consumers(app) - before
        assert new <= {feed.consumer} and feed.consumer in await _consumers(app)
        assert feed.listeners >= CONNECTIONS
        created = await _post(client, tags=[marker])
        events = await asyncio.gather(*(stream.next_event() for stream in streams))
    assert {event["breadcrumb_id"] for _, event in events} == {created}
    assert len({seq for seq, _ in events}) == 1


async def test_resume_across_the_replay_to_live_switch_sends_each_event_once(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    async with sse(live_url, {"any_tags": marker}) as stream:
        await _post(client, tags=[marker], title="seen")
        last_id, _ = await stream.next_event()
    missed = [await _post(client, tags=[marker], title=f"missed {i}") for i in range(20)]
    headers = {"Last-Event-ID": str(last_id)}
    async with sse(live_url, {"any_tags": marker}, headers) as stream:
        # Committed while the replay runs: each arrives by the replay or by the feed.
        during = [await _post(client, tags=[marker], title=f"during {i}") for i in range(10)]
        received = await stream.events_until(len(missed) + len(during))
        after = await _post(client, tags=[marker], title="after")
        received.append(await stream.next_event())
    assert [event["breadcrumb_id"] for _, event in received] == [*missed, *during, after]
    sequences = [seq for seq, _ in received]
    assert sequences == sorted(set(sequences)) and sequences[0] > last_id


async def test_the_feed_resubscribes_after_nats_restarts(
    live_url: str, app: FastAPI, services: Services, client: httpx.AsyncClient, marker: str
) -> None:
    holder, feed = app.state.resources.nats, app.state.resources.feed
    async with sse(live_url, {"any_tags": marker}) as stream:
        before = await _post(client, tags=[marker], title="before")
        assert (await stream.next_event())[1]["breadcrumb_id"] == before
        old_consumer = feed.consumer
        services.nats.stop()
        try:
            await eventually(lambda: not holder.connected)
            during = await _post(client, tags=[marker], title="during")  # waits in the outbox
        finally:
            services.nats.start()
        await eventually(lambda: holder.connected, timeout=15)
        after = await _post(client, tags=[marker], title="after")
        received = [(await stream.next_event(timeout=20))[1]["breadcrumb_id"] for _ in range(2)]
        assert received == [during, after]
        assert feed.consumer != old_consumer and feed.consumer in await _consumers(app)
