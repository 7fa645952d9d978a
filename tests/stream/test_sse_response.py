"""A connection served by sse-starlette's ``EventSourceResponse``, driven through ASGI by a
client the test controls: pings, a disconnect, a client that stops reading, a shutdown."""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sse_starlette.sse import AppStatus, EventSourceResponse
from tests.stream.sse_client import sse
from tests.waiting import eventually

from cairn.events.selectors import Selector
from cairn.stream import sse as sse_module
from cairn.stream.feed import Fanout
from cairn.stream.frames import CONNECTED, PING, frame_bytes
from cairn.stream.response import EventStream, event_stream
from cairn.stream.sse import SseConnection

SCOPE = {"type": "http", "method": "GET", "asgi": {"spec_version": "2.3"}}


class AsgiClient:
    """The server's view of one HTTP client: what was sent to it, and whether it is gone."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.stalled = False  # its socket is full: a send never returns

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body"]

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if self.stalled:
            await asyncio.Event().wait()
        self.messages.append(message)


def _event(owner: uuid.UUID) -> bytes:
    return json.dumps({"owner_id": str(owner), "tags": []}).encode()


def _serve(
    feed: Fanout, owner: uuid.UUID, on_close: Callable[[], None], ping_interval_s: float = 60
) -> tuple[SseConnection, AsgiClient, asyncio.Task[None]]:
    connection = SseConnection(feed, Selector(), owner, queue_size=5, on_close=on_close)
    client = AsgiClient()
    response = event_stream(connection, ping_interval_s)
    return connection, client, asyncio.create_task(response(SCOPE, client.receive, client.send))


async def test_pings_are_data_frames_and_a_disconnect_releases_the_connection() -> None:
    owner, feed, released = uuid.uuid4(), Fanout(), []
    _, client, serving = _serve(feed, owner, lambda: released.append(1), ping_interval_s=0.05)
    await eventually(lambda: client.bodies().count(PING) >= 2, timeout=2)
    assert client.bodies()[0] == CONNECTED and feed.listeners == 1
    assert PING == b'data: {"type":"ping"}\n\n'  # a data frame: RCRT's clients see it
    feed.dispatch(1, _event(owner))
    await eventually(lambda: frame_bytes(1, _event(owner)) in client.bodies(), timeout=2)
    client.gone.set()
    await asyncio.wait_for(serving, 1)
    assert feed.listeners == 0 and released == [1]


async def test_a_dropped_client_that_reads_nothing_is_cut_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sse_module, "SLOW_CLIENT_GRACE_S", 0.1)
    owner, feed, released = uuid.uuid4(), Fanout(), []
    connection, client, serving = _serve(feed, owner, lambda: released.append(1))
    await eventually(lambda: client.bodies() == [CONNECTED], timeout=2)
    client.stalled = True
    for seq in range(1, 50):
        feed.dispatch(seq, _event(owner))
    # Still connected, reading nothing: the response ends all the same (pings included).
    await asyncio.wait_for(serving, 2)
    assert connection.dropped and feed.listeners == 0 and released == [1]


def test_a_line_break_in_the_data_stays_one_event() -> None:
    assert frame_bytes(7, b'{"a":\n1}') == b'id: 7\ndata: {"a":\ndata: 1}\n\n'


async def test_open_streams_end_with_reconnect_when_the_server_shuts_down(live_url: str) -> None:
    """uvicorn's exit signal (``AppStatus``, set by its signal handler) ends every stream with
    a ``reconnect`` frame, so a stopping ``cairn serve`` does not wait on its SSE clients."""
    async with sse(live_url, {"any_tags": "nothing-matches"}) as stream:
        assert await stream.lines.__anext__() == ": connected"
        AppStatus.should_exit = True
        try:
            assert (await stream.next_frame(timeout=3))["data"] == {"type": "reconnect"}
            with pytest.raises(EOFError):  # the response ended properly, not cut off
                await stream.next_frame(timeout=3)
        finally:
            AppStatus.should_exit = False


def test_frames_go_out_through_the_send_path_event_stream_replaces() -> None:
    """``EventStream`` skips sse-starlette's per-send cancel scope by overriding its send
    path; were the library to rename it, the override would silently stop applying."""
    assert "self._send_with_timeout(" in inspect.getsource(EventSourceResponse._stream_response)
    assert EventStream._send_with_timeout is not EventSourceResponse._send_with_timeout
