"""A webhook receiver on 127.0.0.1 in the test's event loop: records every request and
answers 500 while told to fail."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        event: dict[str, Any] = json.loads(self.body)
        return event

    def signed_with(self, secret: str) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers["x-cairn-signature"], expected)


@dataclass
class Receiver:
    requests: list[Received] = field(default_factory=list)
    failures_left: int = 0  # answer 500 to this many requests first
    always_fail: bool = False
    server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/hook"

    async def start(self) -> Receiver:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 2)

    def for_event(self, event_id: str) -> list[Received]:
        return [r for r in self.requests if r.headers.get("x-cairn-event-id") == event_id]

    def tagged(self, tag: str) -> list[Received]:
        return [r for r in self.requests if tag in r.event.get("tags", [])]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode()
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Received(request_line.split(" ")[1], headers, body))
            status = "500 Internal Server Error" if self._fails() else "200 OK"
            reply = "no thanks" if status.startswith("500") else ""
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Length: {len(reply)}\r\n"
                f"Connection: close\r\n\r\n{reply}".encode()
            )
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
            pass
        finally:
            writer.close()

    def _fails(self) -> bool:
        if self.always_fail:
            return True
        if self.failures_left > 0:
            self.failures_left -= 1
            return True
        return False
