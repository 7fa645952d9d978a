"""The process's NATS connection: made in the background, reconnects by itself, and never
blocks start-up. Whoever needs JetStream asks the holder and copes with ``None``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext

log = logging.getLogger(__name__)


class NatsHolder:
    def __init__(self, url: str) -> None:
        self.url = url
        self.client: Client | None = None
        # Set by the process once it has declared what it needs (the stream) after connecting.
        self.ready = asyncio.Event()
        # Called (synchronously: schedule work, do not block) after each reconnection.
        self.on_reconnect: list[Callable[[], None]] = []

    @property
    def connected(self) -> bool:
        return self.client is not None and self.client.is_connected

    def jetstream(self) -> JetStreamContext | None:
        """JetStream when connected now, else None (callers retry later)."""
        return self.client.jetstream() if self.connected and self.client else None

    async def run(self) -> None:
        """Keep trying until NATS answers; after that the client reconnects by itself."""
        delay = 0.5
        while self.client is None:
            try:
                self.client = await nats.connect(
                    self.url,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    connect_timeout=2,
                    name="cairn",
                    reconnected_cb=self._reconnected,
                )
            except Exception as error:
                log.warning(
                    "NATS at %s not reachable (%s); retrying in %.1f s", self.url, error, delay
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        log.info("connected to NATS at %s", self.url)

    async def _reconnected(self) -> None:
        log.info("reconnected to NATS at %s", self.url)
        for callback in self.on_reconnect:
            callback()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
