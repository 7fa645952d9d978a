"""ASGI middleware: request size limit and Prometheus request metrics."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from prometheus_client import Counter, Histogram
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUESTS = Counter("cairn_http_requests_total", "HTTP requests", ["method", "route", "status"])
UNAVAILABLE = Counter(
    "cairn_http_unavailable_total", "Requests answered 503 for an outage", ["reason"]
)
LATENCY = Histogram(
    "cairn_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


class BodySizeLimit:
    """Refuse bodies over ``max_bytes`` with 413: by ``Content-Length`` before the application
    reads anything, and by counting for bodies sent without one (chunked). ``larger`` gives
    the paths that take more (the batch route) their own cap."""

    def __init__(
        self, app: ASGIApp, max_bytes: int, larger: Mapping[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        most = self.larger.get(scope["path"], self.max_bytes)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > most):
            await _send_json(send, 413, "payload_too_large", f"body over {most} bytes")
            return
        await self.app(scope, self._counting(receive, most) if length is None else receive, send)

    def _counting(self, receive: Receive, most: int) -> Receive:
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > most:
                    # FastAPI re-raises HTTPExceptions from reading the body: a 413 response.
                    raise HTTPException(413, f"body over {most} bytes")
            return message

        return counted


class RequestMetrics:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observe(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            method = scope["method"]
            REQUESTS.labels(method, route, str(status)).inc()
            LATENCY.labels(method, route).observe(time.perf_counter() - started)


async def _send_json(send: Send, status: int, code: str, detail: str) -> None:
    body = json.dumps({"error": code, "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
