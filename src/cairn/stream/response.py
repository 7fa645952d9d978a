"""The response that serves one SSE connection: sse-starlette's ``EventSourceResponse``
(framing, pings, the client's disconnect, the server's shutdown) over ``SseConnection.frames``."""

from __future__ import annotations

from typing import Any

import anyio
from sse_starlette import EventSourceResponse
from starlette.types import Message, Receive, Scope, Send

from cairn.stream.asgi import server_send
from cairn.stream.eager import Remainder, begin
from cairn.stream.frames import SEPARATOR, ping_event
from cairn.stream.sse import SseConnection

# On the server's shutdown, a connection gets this long to send what it holds and a
# ``reconnect`` frame before sse-starlette cancels it.
SHUTDOWN_GRACE_S = 1.0


class EventStream(EventSourceResponse):
    """sse-starlette's response, sending each frame without a cancel scope when no send
    timeout is set (none is: see ``sse._cancel_later``). The scope it enters for every send
    was most of a connection's cost per event: 8-9 µs with it, 3.4 without, in an in-process
    fan-out to 200 connections (Starlette's ``StreamingResponse`` before: 3.1); about 1 ms
    more before an event reached the last of 200 clients.

    It is also the connection's ``FrameWriter``: once the stream has begun, the feed's
    dispatch sends a frame through ``write`` itself while the response task waits for one
    (``SseConnection._send``), never while a ping holds sse-starlette's send lock, nor after
    the response ended or the client left (``active``).

    Body chunks, frames and pings, go to the server's ``send`` past the middleware
    (``stream.asgi``); the response's start and end go through it."""

    def __init__(self, connection: SseConnection, **options: Any) -> None:
        super().__init__(connection.frames(), **options)
        self._connection = connection
        self._server_send: Send | None = None
        self._chunks: Send | None = None  # where body chunks go, once the response began

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._server_send = server_send(scope)
        await super().__call__(scope, receive, send)

    async def _stream_response(self, send: Send) -> None:
        self._chunks = self._server_send or send
        self._connection.writer = self
        await super()._stream_response(send)

    def idle(self) -> bool:
        return self.active and not self._send_lock.locked()

    def write(self, frame: bytes) -> Remainder | None:
        assert self._chunks is not None
        return begin(self._chunks({"type": "http.response.body", "body": frame, "more_body": True}))

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self._chunks is not None and message.get("more_body"):
            send = self._chunks
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)


def event_stream(connection: SseConnection, ping_interval_s: float) -> EventStream:
    """The response that serves ``connection``: sse-starlette sends a ping frame every
    ``ping_interval_s`` and watches for the client's disconnect and the server's shutdown."""
    shutdown = anyio.Event()
    return EventStream(
        connection,
        ping=ping_interval_s,
        ping_message_factory=ping_event,
        sep=SEPARATOR,
        shutdown_event=shutdown,
        shutdown_grace_period=SHUTDOWN_GRACE_S,
        data_sender_callable=lambda: connection.end_on(shutdown),
    )
