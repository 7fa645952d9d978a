"""A small SSE reader for tests: frames as (id, data) with pings and comments counted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx


class SseReader:
    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lines = response.aiter_lines()
        self.pings = 0
        self.raw: list[str] = []

    async def next_frame(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next frame's fields (``id``, ``data`` parsed as JSON, ``event`` if any)."""
        return await asyncio.wait_for(self._frame(), timeout)

    async def next_event(self, timeout: float = 5.0) -> tuple[int, dict[str, Any]]:
        """The next breadcrumb event, skipping pings."""
        while True:
            frame = await self.next_frame(timeout)
            if frame["data"].get("type") == "ping":
                self.pings += 1
                continue
            return int(frame.get("id", -1)), frame["data"]

    async def events_until(
        self, count: int, timeout: float = 10.0
    ) -> list[tuple[int, dict[str, Any]]]:
        return [await self.next_event(timeout) for _ in range(count)]

    async def _frame(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        async for line in self.lines:
            self.raw.append(line)
            if not line:
                if "data" in fields:
                    fields["data"] = json.loads(fields["data"])
                    return fields
                fields = {}
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        raise EOFError("the stream ended")


@asynccontextmanager
async def sse(
    url: str, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[SseReader]:
    async with (
        httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(10, read=30)) as client,
        client.stream("GET", "/events/stream", params=params, headers=headers) as response,
    ):
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield SseReader(response)
