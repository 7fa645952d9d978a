"""SSE connections leave nothing behind, send pings, and drop clients that fall behind."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from fastapi import FastAPI
from tests.stream.sse_client import sse

from cairn.events.payloads import STREAM_NAME
from cairn.events.selectors import Selector
from cairn.stream.sse import PING, RECONNECT, SseConnection

CYCLES = 500


async def _consumers(app: FastAPI) -> set[str]:
    js = app.state.resources.nats.jetstream()
    return {info.name for info in await js.consumers_info(STREAM_NAME)}


async def test_connect_disconnect_cycles_leave_nothing_behind(live_url: str, app: FastAPI) -> None:
    nats_client = app.state.resources.nats.client
    await asyncio.sleep(0.2)
    consumers = await _consumers(app)
    tasks, subscriptions = asyncio.all_tasks(), set(nats_client._subs)
    for _ in range(CYCLES):
        async with sse(live_url, {"any_tags": "nothing-matches"}) as stream:
            await stream.lines.__anext__()  # the ": connected" comment: the consumer exists
    for _ in range(50):  # the server finishes tearing down the last connection
        # Only what the cycles created counts: other tests' leftovers may expire meanwhile.
        left = await _consumers(app) - consumers
        # The session's worker and webhook consumers keep polling with short-lived tasks of
        # their own; what an SSE connection starts is its reader and the server's request
        # task (a subscription left behind shows up below).
        new_tasks = {task for task in asyncio.all_tasks() - tasks if _from_sse(task)}
        new_subscriptions = set(nats_client._subs) - subscriptions
        if not (left or new_tasks or new_subscriptions):
            break
        await asyncio.sleep(0.1)
    assert not left, f"{len(left)} consumers left behind"
    assert not new_tasks, f"{len(new_tasks)} tasks left behind"
    assert not new_subscriptions, f"{len(new_subscriptions)} subscriptions left behind"


def _from_sse(task: asyncio.Task[Any]) -> bool:
    name = getattr(task.get_coro(), "__qualname__", "")
    return task.get_name() == "sse-reader" or "SseConnection" in name or "run_asgi" in name


class FakeMessage:
    def __init__(self, seq: int, event: dict[str, Any]) -> None:
        import json
        from types import SimpleNamespace

        self.data = json.dumps(event).encode()
        self.metadata = SimpleNamespace(sequence=SimpleNamespace(stream=seq))


class FakeSubscription:
    """Stands in for the JetStream consumer: hands out queued messages."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[FakeMessage] = asyncio.Queue()
        self.unsubscribed = False

    async def next_msg(self, timeout: float) -> FakeMessage:
        return await self.messages.get()

    async def unsubscribe(self) -> None:
        self.unsubscribed = True


class FakeJetStream:
    def __init__(self) -> None:
        self.deleted: list[str] = []

    async def delete_consumer(self, stream: str, consumer: str) -> None:
        self.deleted.append(consumer)


def _connection(subscription: FakeSubscription, owner: uuid.UUID, **options: Any) -> SseConnection:
    return SseConnection(FakeJetStream(), subscription, Selector(), owner, **options)  # type: ignore[arg-type]


async def test_idle_connection_gets_pings() -> None:
    subscription = FakeSubscription()
    connection = _connection(subscription, uuid.uuid4(), queue_size=10, ping_interval_s=0.05)
    frames = connection.frames()
    assert await frames.__anext__() == ": connected\n\n"
    assert await frames.__anext__() == PING
    assert await frames.__anext__() == PING
    await frames.aclose()
    assert subscription.unsubscribed


async def test_slow_client_gets_reconnect_and_is_released() -> None:
    owner = uuid.uuid4()
    subscription = FakeSubscription()
    connection = _connection(subscription, owner, queue_size=5, ping_interval_s=60)
    frames = connection.frames()
    assert await frames.__anext__() == ": connected\n\n"
    for seq in range(1, 50):  # the client reads nothing while 49 events arrive
        subscription.messages.put_nowait(FakeMessage(seq, {"owner_id": str(owner), "tags": []}))
    await asyncio.sleep(0.05)
    assert connection.queue.qsize() <= 2  # bounded: the backlog was dropped
    assert await frames.__anext__() == RECONNECT
    assert [frame async for frame in frames] == []
    assert subscription.unsubscribed


async def test_other_tenants_events_are_not_sent() -> None:
    owner = uuid.uuid4()
    subscription = FakeSubscription()
    connection = _connection(subscription, owner, queue_size=5, ping_interval_s=60)
    frames = connection.frames()
    await frames.__anext__()
    subscription.messages.put_nowait(FakeMessage(1, {"owner_id": str(uuid.uuid4()), "tags": []}))
    subscription.messages.put_nowait(FakeMessage(2, {"owner_id": str(owner), "tags": []}))
    assert (await frames.__anext__()).startswith("id: 2\n")
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
