"""The server's own ``send``, kept in the scope for the SSE responses' body chunks.

Every layer of middleware wraps ``send`` in a coroutine of its own, and an SSE frame goes to
every subscriber: with 200 of them, the five wrappers between the route and uvicorn were
most of the loop's work per connection per event once the frame was sent from the dispatch
(``benchmarks/results/sse_fanout.md``). Each of Cairn's layers watches only a response's
start (its status) or its end; an ``EventStream`` sends those through the chain and its
body chunks straight to the server. That holds only while no layer rewrites a body (a
compressing middleware would; Starlette's GZip leaves ``text/event-stream`` alone), and
``tests/stream/test_server_send.py`` fails when a layer it does not know is added.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

SERVER_SEND = "cairn.server_send"


class ServerSend:
    """The outermost middleware: puts the server's ``send`` into the scope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[SERVER_SEND] = send
        await self.app(scope, receive, send)


def server_send(scope: Scope) -> Send | None:
    """The server's ``send`` of an HTTP request that came through ``ServerSend``."""
    return scope.get(SERVER_SEND) if scope["type"] == "http" else None
