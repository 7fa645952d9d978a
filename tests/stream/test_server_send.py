"""SSE body chunks go to the server's ``send`` past the middleware (``stream.asgi``); the
response's start and end still pass every layer."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, ClassVar

from fastapi import FastAPI
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send
from tests.waiting import eventually

from cairn.api.app import create_app
from cairn.api.errors import ErrorBoundary
from cairn.api.middleware import BodySizeLimit, RequestMetrics
from cairn.config import Settings
from cairn.events.selectors import Selector
from cairn.stream.asgi import ServerSend
from cairn.stream.feed import Fanout
from cairn.stream.frames import CONNECTED, frame_bytes
from cairn.stream.response import event_stream
from cairn.stream.sse import SseConnection

# Layers known to look at a response's start and end only, never at a body chunk.
BODY_BLIND = {ServerSend, RequestMetrics, BodySizeLimit, ErrorBoundary}

SCOPE = {
    "type": "http",
    "asgi": {"version": "3.0", "spec_version": "2.3"},
    "http_version": "1.1",
    "method": "GET",
    "scheme": "http",
    "path": "/stream",
    "raw_path": b"/stream",
    "root_path": "",
    "query_string": b"",
    "headers": [],
}


class Watching:
    """A layer that keeps the type of every message sent through it."""

    seen: ClassVar[list[str]] = []

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def watched(message: Any) -> None:
            more = " (more)" if message.get("more_body") else ""
            Watching.seen.append(message["type"] + more)
            await send(message)

        await self.app(scope, receive, watched)


def test_every_layer_the_chunks_skip_is_blind_to_bodies() -> None:
    """Were a layer that rewrites bodies (compression) added inside ``ServerSend``, SSE
    chunks would skip it. (Layers outside it, FastAPI's own, still see every chunk.)"""
    app = create_app(Settings())
    layers = [middleware.cls for middleware in app.user_middleware]
    assert layers[0] is ServerSend
    assert set(layers) <= BODY_BLIND, set(layers) - BODY_BLIND
    stack: Any = app.build_middleware_stack()
    while not isinstance(stack, ServerSend):
        stack = stack.app
    while not isinstance(stack, ExceptionMiddleware):  # Starlette's: the start only
        assert type(stack) in BODY_BLIND, type(stack)
        stack = stack.app


async def test_chunks_skip_the_layers_and_the_start_and_end_pass_them() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    connection = SseConnection(feed, Selector(), owner, queue_size=10)
    app = FastAPI()

    @app.get("/stream")
    async def stream() -> Any:
        return event_stream(connection, 60.0)

    app.add_middleware(Watching)
    app.add_middleware(ServerSend)
    Watching.seen = []
    written: list[dict[str, Any]] = []
    gone = asyncio.Event()

    async def send(message: Any) -> None:
        written.append(message)

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    serving = asyncio.create_task(app(dict(SCOPE), receive, send))
    await eventually(lambda: feed.listeners == 1 and len(written) == 2, timeout=2)
    data = json.dumps({"owner_id": str(owner), "tags": []}).encode()
    feed.dispatch(1, data)
    await connection.end_on(_set(asyncio.Event()))  # the server stops: reconnect, end
    await asyncio.wait_for(serving, 2)
    bodies = [m["body"] for m in written if m["type"] == "http.response.body"]
    assert bodies[:2] == [CONNECTED, frame_bytes(1, data)] and bodies[-1] == b""
    assert Watching.seen == ["http.response.start", "http.response.body"]


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event
