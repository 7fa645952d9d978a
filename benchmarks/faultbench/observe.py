"""What subscribers see: an SSE follower that reconnects with ``Last-Event-ID`` as a browser's
EventSource does, the JetStream stream read directly, and a local webhook receiver."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from cairn.events.payloads import STREAM_NAME

RECONNECT_DELAY_S = 0.5


@dataclass
class SseFollower:
    """Follows ``/events/stream`` with ``params``; records (stream sequence, event) of every
    breadcrumb event in arrival order, across reconnects."""

    http: httpx.AsyncClient
    params: dict[str, str]
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    last_id: str | None = None
    last_arrival: float | None = None

    async def run(self) -> None:
        """Until cancelled."""
        while True:
            try:
                await self._follow_once()
            except httpx.HTTPError as error:
                self.errors[type(error).__name__] += 1
            await asyncio.sleep(RECONNECT_DELAY_S)

    async def _follow_once(self) -> None:
        headers = {"Last-Event-ID": self.last_id} if self.last_id else {}
        timeout = httpx.Timeout(10, read=60)
        async with self.http.stream(
            "GET", "/events/stream", params=self.params, headers=headers, timeout=timeout
        ) as response:
            self.statuses[response.status_code] += 1
            if response.status_code != 200:
                return
            frame_id: str | None = None
            async for line in response.aiter_lines():
                if line.startswith(": connected"):
                    self.connected.set()
                elif line.startswith("id: "):
                    frame_id = line[4:]
                elif line.startswith("data: "):
                    self._on_data(frame_id, json.loads(line[6:]))
                elif not line:
                    frame_id = None

    def _on_data(self, frame_id: str | None, event: dict[str, Any]) -> None:
        if frame_id is None or "breadcrumb_id" not in event:
            return  # pings, reconnect requests
        self.last_id = frame_id
        self.last_arrival = time.monotonic()
        self.events.append((int(frame_id), event))

    def created_ids(self) -> list[str]:
        return [e["breadcrumb_id"] for _, e in self.events if e["type"] == "breadcrumb.created"]


def delivery_check(acknowledged: list[str], seen: list[str]) -> dict[str, int]:
    """Lost (acknowledged, never seen), duplicated (seen more than once) and out-of-order
    (acknowledged one after another, seen in another order) events."""
    counts = Counter(seen)
    wanted = set(acknowledged)
    first_seen = list(dict.fromkeys(i for i in seen if i in wanted))
    position = {i: n for n, i in enumerate(acknowledged)}
    in_order = sum(1 for a, b in itertools.pairwise(first_seen) if position[a] > position[b])
    return {
        "lost": len(wanted - counts.keys()),
        "duplicated": sum(counts[i] - 1 for i in wanted if counts[i] > 1),
        "out_of_order": in_order,
    }


async def stream_sequence(nats_url: str) -> int:
    """The last sequence of the event stream now."""
    import nats

    client = await nats.connect(nats_url, connect_timeout=5, max_reconnect_attempts=3)
    try:
        info = await client.jetstream().stream_info(STREAM_NAME)
        return int(info.state.last_seq)
    finally:
        await client.close()


async def created_events_since(nats_url: str, after_seq: int) -> Counter[str]:
    """How often each breadcrumb's ``created`` event is on the stream after ``after_seq``
    (read message by message: the ground truth, not what a consumer chose to deliver)."""
    import nats
    from nats.js.errors import NotFoundError

    client = await nats.connect(nats_url, connect_timeout=5, max_reconnect_attempts=3)
    found: Counter[str] = Counter()
    try:
        js = client.jetstream()
        last = int((await js.stream_info(STREAM_NAME)).state.last_seq)
        for seq in range(after_seq + 1, last + 1):
            try:
                message = await js.get_msg(STREAM_NAME, seq)
            except NotFoundError:
                continue
            event = json.loads(message.data or b"{}")
            if event.get("type") == "breadcrumb.created":
                found[str(event.get("breadcrumb_id"))] += 1
    finally:
        await client.close()
    return found


@dataclass
class WebhookReceiver:
    """A bare HTTP/1.1 endpoint on 127.0.0.1 that answers 200 to every POST and records the
    breadcrumb id of every event it received (hand-written: four lines of HTTP need no
    framework)."""

    received: Counter[str] = field(default_factory=Counter)
    server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/hook"

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            headers = dict(
                line.split(":", 1) for line in head.decode("latin-1").split("\r\n")[1:] if line
            )
            headers = {k.strip().lower(): v.strip() for k, v in headers.items()}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.received[str(json.loads(body).get("breadcrumb_id"))] += 1
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            await writer.drain()
        except (asyncio.IncompleteReadError, TimeoutError, ValueError, ConnectionError):
            pass
        finally:
            writer.close()
