"""Frames sent from the feed's dispatch itself (``SseConnection._send`` through
``EventStream.write``): in order, only to their tenant, a full socket leaves the rest to the
connection's task without holding up the dispatch or anyone else, and never while a ping
is being sent."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from tests.waiting import eventually

from cairn.events.selectors import Selector
from cairn.stream.feed import Fanout
from cairn.stream.frames import CONNECTED, PING, RECONNECT, frame_bytes
from cairn.stream.response import event_stream
from cairn.stream.sse import SseConnection

SCOPE = {"type": "http", "method": "GET", "asgi": {"spec_version": "2.3"}}


class Socket:
    """The server's view of one client's socket: the messages written to it, how many sends
    began, and a full buffer (``room`` cleared) that holds every send until it is set."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.begun = 0
        self.room = asyncio.Event()
        self.room.set()
        self.gone = asyncio.Event()

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body"]

    def ids(self) -> list[int]:
        return [int(body.split(b"\n")[0][4:]) for body in self.bodies() if body[:4] == b"id: "]

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.begun += 1
        await self.room.wait()
        self.messages.append(message)


def _event(owner: uuid.UUID) -> bytes:
    return json.dumps({"owner_id": str(owner), "tags": []}).encode()


async def _serve(
    feed: Fanout, owner: uuid.UUID, *, queue_size: int = 50, ping_interval_s: float = 60
) -> tuple[SseConnection, Socket, asyncio.Task[None]]:
    connection = SseConnection(feed, Selector(), owner, queue_size=queue_size)
    socket = Socket()
    response = event_stream(connection, ping_interval_s)
    serving = asyncio.create_task(response(SCOPE, socket.receive, socket.send))
    await eventually(lambda: socket.bodies() == [CONNECTED], timeout=2)
    await asyncio.sleep(0)  # the response task is back waiting for a frame
    return connection, socket, serving


async def _end(*servings: asyncio.Task[None]) -> None:
    for serving in servings:
        serving.cancel()
    await asyncio.gather(*servings, return_exceptions=True)


async def test_a_frame_is_written_within_the_dispatch_and_in_order() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    connection, socket, serving = await _serve(feed, owner)
    for seq in range(1, 21):
        feed.dispatch(seq, _event(owner))
        # Written before anything else ran: no task was woken for it.
        assert socket.bodies()[-1] == frame_bytes(seq, _event(owner))
    assert socket.ids() == list(range(1, 21)) and connection.queue.empty()
    await _end(serving)


async def test_a_frame_reaches_only_its_tenants_connections() -> None:
    feed, a, b = Fanout(), uuid.uuid4(), uuid.uuid4()
    _, socket_a, serving_a = await _serve(feed, a)
    _, socket_b, serving_b = await _serve(feed, b)
    feed.dispatch(1, _event(a))
    feed.dispatch(2, _event(b))
    await asyncio.sleep(0.01)
    assert socket_a.ids() == [1] and socket_b.ids() == [2]
    await _end(serving_a, serving_b)


async def test_a_full_socket_holds_up_neither_the_dispatch_nor_the_others() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    slow, slow_socket, slow_serving = await _serve(feed, owner)
    _, fast_socket, fast_serving = await _serve(feed, owner)
    slow_socket.room.clear()
    for seq in range(1, 11):
        feed.dispatch(seq, _event(owner))
        assert fast_socket.ids()[-1] == seq  # at once, whatever the slow one does
    await asyncio.sleep(0.01)
    assert slow_socket.ids() == [] and not slow.dropped
    slow_socket.room.set()  # the client reads again: the rest, then the queue, in order
    await eventually(lambda: slow_socket.ids() == list(range(1, 11)), timeout=2)
    feed.dispatch(11, _event(owner))
    assert slow_socket.ids()[-1] == 11  # and back to the direct path
    await _end(slow_serving, fast_serving)


async def test_a_client_that_stays_full_is_dropped_with_a_reconnect() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    connection, socket, serving = await _serve(feed, owner, queue_size=5)
    socket.room.clear()
    for seq in range(1, 10):
        feed.dispatch(seq, _event(owner))
    assert connection.dropped and feed.listeners == 0
    socket.room.set()
    # What was queued is abandoned, the rest of its first frame's send included; the client
    # resumes from the last id it read.
    await asyncio.wait_for(serving, 2)
    assert socket.bodies() == [CONNECTED, RECONNECT, b""]


async def test_no_frame_is_begun_while_a_ping_is_being_sent() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    _, socket, serving = await _serve(feed, owner, ping_interval_s=0.05)
    socket.room.clear()
    await eventually(lambda: socket.begun == 3, timeout=2)  # start, CONNECTED, the ping
    feed.dispatch(1, _event(owner))
    assert socket.begun == 3  # not from the dispatch: the ping holds the send lock
    socket.room.set()
    await eventually(lambda: socket.ids() == [1], timeout=2)
    # Each went out whole, as one message (which of the two uvicorn writes first, once the
    # socket has room, sse-starlette leaves open, as it did before the direct path).
    bodies = socket.bodies()
    assert bodies[0] == CONNECTED and PING in bodies
    assert all(body in (PING, frame_bytes(1, _event(owner))) for body in bodies[1:])
    await _end(serving)


async def test_after_a_disconnect_nothing_more_is_written() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    connection, socket, serving = await _serve(feed, owner)
    socket.gone.set()
    await asyncio.wait_for(serving, 1)
    written = len(socket.messages)
    connection.deliver(1, frame_bytes(1, _event(owner)))  # a dispatch already under way
    assert len(socket.messages) == written and feed.listeners == 0
