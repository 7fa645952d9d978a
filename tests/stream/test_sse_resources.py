"""SSE connections leave nothing behind and drop clients that fall behind."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.stream.sse_client import sse

from cairn.events.payloads import STREAM_NAME
from cairn.events.selectors import Selector
from cairn.stream.feed import Fanout
from cairn.stream.frames import CONNECTED, RECONNECT
from cairn.stream.sse import SseConnection

CYCLES = 500


async def _consumers(app: FastAPI) -> set[str]:
    js = app.state.resources.nats.jetstream()
    return {info.name for info in await js.consumers_info(STREAM_NAME)}


async def test_connect_disconnect_cycles_leave_nothing_behind(live_url: str, app: FastAPI) -> None:
    nats_client = app.state.resources.nats.client
    async with sse(live_url, {"any_tags": "nothing-matches"}) as stream:
        await stream.lines.__anext__()  # the shared feed's consumer exists from here on
    await asyncio.sleep(0.2)
    consumers = await _consumers(app)
    tasks, subscriptions = asyncio.all_tasks(), set(nats_client._subs)
    for _ in range(CYCLES):
        async with sse(live_url, {"any_tags": "nothing-matches"}) as stream:
            await stream.lines.__anext__()  # the ": connected" comment: it joined the feed
    for _ in range(50):  # the server finishes tearing down the last connection
        # Only what the cycles created counts: other tests' leftovers may expire meanwhile.
        left = await _consumers(app) - consumers
        # The session's worker and webhook consumers keep polling with short-lived tasks of
        # their own; what an SSE connection starts is its replay, the server's request task
        # and the response's own (a subscription left behind shows up below).
        new_tasks = {task for task in asyncio.all_tasks() - tasks if _from_sse(task)}
        new_subscriptions = set(nats_client._subs) - subscriptions
        listeners = app.state.resources.feed.listeners
        if not (left or new_tasks or new_subscriptions or listeners):
            break
        await asyncio.sleep(0.1)
    assert not left, f"{len(left)} consumers left behind"
    assert not new_tasks, f"{len(new_tasks)} tasks left behind"
    assert not new_subscriptions, f"{len(new_subscriptions)} subscriptions left behind"
    assert not listeners, f"{listeners} connections still on the shared feed"


def _from_sse(task: asyncio.Task[Any]) -> bool:
    name = getattr(task.get_coro(), "__qualname__", "")
    return task.get_name() == "sse-replay" or any(
        part in name for part in ("SseConnection", "EventSourceResponse", "run_asgi")
    )


def _event(owner: uuid.UUID, **fields: Any) -> bytes:
    return json.dumps({"owner_id": str(owner), "tags": [], **fields}).encode()


def _connection(feed: Fanout, owner: uuid.UUID, **options: Any) -> SseConnection:
    return SseConnection(feed, Selector(), owner, **options)


async def test_slow_client_gets_reconnect_and_is_released() -> None:
    owner, feed, released = uuid.uuid4(), Fanout(), []
    connection = _connection(feed, owner, queue_size=5, on_close=lambda: released.append(1))
    frames = connection.frames()
    assert await frames.__anext__() == CONNECTED
    for seq in range(1, 50):  # the client reads nothing while 49 events arrive
        feed.dispatch(seq, _event(owner))
    assert connection.queue.qsize() <= 2  # bounded: the backlog was dropped
    assert feed.listeners == 0 and released == [1]  # off the feed, its slot given back
    assert await frames.__anext__() == RECONNECT
    assert [frame async for frame in frames] == []
    assert released == [1]


async def test_other_tenants_events_are_not_sent() -> None:
    owner, feed = uuid.uuid4(), Fanout()
    connection = _connection(feed, owner, queue_size=5)
    frames = connection.frames()
    await frames.__anext__()
    feed.dispatch(1, _event(uuid.uuid4()))
    feed.dispatch(2, _event(owner))
    assert (await frames.__anext__()).startswith(b"id: 2\n")
    await frames.aclose()


async def test_stream_is_503_without_nats(settings: Any) -> None:
    from cairn.api.app import create_app
    from cairn.embedding import HashEmbedder

    offline = settings.model_copy(update={"nats_url": None})
    application = create_app(offline, embedder=HashEmbedder(), migrate=False)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/events/stream")
    assert response.status_code == 503 and response.json()["error"] == "unavailable"
