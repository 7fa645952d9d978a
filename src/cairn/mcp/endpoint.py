"""``/mcp``: the MCP server over streamable HTTP inside the API, behind the API's own auth.

Stateless and answering in JSON: any ``cairn serve`` process can take any request (no
session lives in one process's memory), and the tools never call back to the client. Every
HTTP request is authenticated like an API route (``CAIRN_AUTH=jwt``: a Bearer token, 401
without one; the caller's tenant and roles apply to each tool call); the caller rides to
the tools on ``request.state``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi.security import HTTPBearer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from cairn.api.deps import get_principal, get_resources
from cairn.config import Settings
from cairn.mcp.inprocess import caller_backend
from cairn.mcp.server import build_server

PATH = "/mcp"
_bearer = HTTPBearer(auto_error=False)  # as the API's routes read the token

# Without authentication (loopback only) the Host and Origin headers are checked, so a web
# page cannot reach the tools through DNS rebinding.
LOOPBACK = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)


class McpEndpoint:
    """The ASGI app served at ``/mcp``; ``running()`` belongs in the app's lifespan."""

    def __init__(self, settings: Settings) -> None:
        server = build_server(caller_backend)
        security = LOOPBACK if settings.auth == "disabled" else None
        # Builds the SDK's session manager (and a Starlette app around it that is not used:
        # the route below is the API's own, behind its auth).
        server.streamable_http_app(
            stateless_http=True, json_response=True, transport_security=security
        )
        self.sessions: StreamableHTTPSessionManager = server.session_manager

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's session manager, for the app's lifetime. It runs in a task of its own:
        its task group must be left by the task that entered it, and a lifespan may be
        entered and left by different tasks (test fixtures do)."""
        ready, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with self.sessions.run():
                ready.set()
                await stop.wait()

        task = asyncio.create_task(run(), name="mcp-sessions")
        started = asyncio.create_task(ready.wait())
        await asyncio.wait([task, started], return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        if task.done():
            task.result()  # it ended before it started: raise why
        try:
            yield
        finally:
            stop.set()
            await task

    def route(self) -> Route:
        return Route(PATH, endpoint=self, include_in_schema=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        resources = get_resources(request)
        # 401 / 429 as the API's, rendered by its error handlers.
        request.state.principal = await get_principal(resources, await _bearer(request))
        await self.sessions.handle_request(scope, receive, send)
