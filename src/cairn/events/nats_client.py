"""The NATS connection held by a process: reconnects by itself, never blocks start-up."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import nats
from nats.aio.client import Client

log = logging.getLogger(__name__)


async def connect(url: str) -> Client:
    return await nats.connect(
        url,
        allow_reconnect=True,
        max_reconnect_attempts=-1,
        reconnect_time_wait=1,
        connect_timeout=2,
        name="cairn",
    )


async def connect_in_background(url: str, on_connected: Callable[[Client], None]) -> None:
    """Keep trying until NATS answers; the service runs (and reports not ready) meanwhile."""
    delay = 0.5
    while True:
        try:
            client = await connect(url)
        except Exception as error:
            log.warning("NATS at %s not reachable (%s); retrying in %.1f s", url, error, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)
            continue
        log.info("connected to NATS at %s", url)
        on_connected(client)
        return
