"""The two clients: the same routes (``_records``, ``_admin``), two thin transports.

Each route method builds a ``Call`` without I/O; ``_send`` is the only code that differs —
``Client`` sends it with ``httpx.Client`` and sleeps between retries, ``AsyncClient`` awaits
``httpx.AsyncClient`` and ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, TypeVar

import httpx

from cairn_client._admin import AdminRoutes
from cairn_client._core import Call
from cairn_client._paths import PathRoutes
from cairn_client._records import RecordRoutes
from cairn_client._retry import RetryPolicy
from cairn_client.errors import error_from, unreachable
from cairn_client.sse import AsyncEventStream, EventStream, StreamOptions

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8081"
DEFAULT_TIMEOUT_S = 30.0


def connection(url: str | None, token: str | None) -> dict[str, Any]:
    """``base_url`` and headers from the arguments, else ``CAIRN_URL`` / ``CAIRN_TOKEN``."""
    token = token or os.environ.get("CAIRN_TOKEN") or None
    headers = {"User-Agent": "cairn-client/0.1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return {"base_url": url or os.environ.get("CAIRN_URL") or DEFAULT_URL, "headers": headers}


async def _pause(seconds: float) -> None:
    """The async client's wait between attempts (one name, so tests can watch it)."""
    await asyncio.sleep(seconds)


def _request(http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
    return http.build_request(
        call.method, call.path, params=call.params, json=call.body, headers=call.headers
    )


class Client(RecordRoutes, AdminRoutes, PathRoutes):
    """Cairn over HTTP, blocking.

    ``url`` defaults to ``$CAIRN_URL`` (else http://127.0.0.1:8081), ``token`` (a JWT) to
    ``$CAIRN_TOKEN``. Errors raise ``cairn_client.errors.CairnError`` subclasses.
    ``transport`` replaces the network (``httpx.MockTransport`` in tests)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._http = httpx.Client(**connection(url, token), timeout=timeout, transport=transport)
        self._retry = retry or RetryPolicy()

    @property
    def url(self) -> str:
        return str(self._http.base_url)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        request = _request(self._http, call)
        attempt = 1
        while True:
            try:
                response = self._http.send(request)
            except httpx.TransportError as error:
                raise unreachable(error) from error
            if response.is_success:
                return call.parse(response)
            delay = self._retry.delay(request, response, attempt)
            if delay is None:
                raise error_from(response)
            time.sleep(delay)
            attempt += 1

    def _stream(self, options: StreamOptions) -> EventStream:
        return EventStream(self._http, options)


class AsyncClient(RecordRoutes, AdminRoutes, PathRoutes):
    """Cairn over HTTP for asyncio: the same methods as ``Client``, to be awaited."""

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            **connection(url, token), timeout=timeout, transport=transport
        )
        self._retry = retry or RetryPolicy()

    @property
    def url(self) -> str:
        return str(self._http.base_url)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        request = _request(self._http, call)
        attempt = 1
        while True:
            try:
                response = await self._http.send(request)
            except httpx.TransportError as error:
                raise unreachable(error) from error
            if response.is_success:
                return call.parse(response)
            delay = self._retry.delay(request, response, attempt)
            if delay is None:
                raise error_from(response)
            await _pause(delay)
            attempt += 1

    def _stream(self, options: StreamOptions) -> AsyncEventStream:
        return AsyncEventStream(self._http, options)
