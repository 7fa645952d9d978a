"""One SSE connection: an ephemeral ordered JetStream consumer, filtered, framed, bounded.

Frames carry ``id: <stream sequence>`` and ``data: <json>`` and no ``event:`` line, so a
plain ``EventSource.onmessage`` receives everything (the type is inside the JSON). A client
that falls more than ``queue_size`` frames behind gets a ``reconnect`` frame and is closed;
its consumer is deleted the moment the connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from prometheus_client import Counter, Gauge

from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS
from cairn.events.selectors import Selector

log = logging.getLogger(__name__)

CONNECTIONS = Gauge("cairn_sse_connections", "Open SSE connections")
DROPPED = Counter("cairn_sse_slow_clients_total", "SSE clients dropped for falling behind")
RECONNECT = 'data: {"type":"reconnect"}\n\n'
PING = 'data: {"type":"ping"}\n\n'
_END = object()
# A dropped slow client that still does not read gets this long before its task is cancelled.
SLOW_CLIENT_GRACE_S = 5.0


async def open_consumer(js: JetStreamContext, since: int | None) -> Any:
    """An ordered push consumer from ``since`` (exclusive) or from now on."""
    if since is None:
        config = ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    else:
        config = ConsumerConfig(
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=since + 1
        )
    config.inactive_threshold = 30.0  # a safety net: we delete it ourselves on disconnect
    return await js.subscribe(
        STREAM_SUBJECTS, stream=STREAM_NAME, ordered_consumer=True, config=config
    )


class SseConnection:
    def __init__(
        self,
        js: JetStreamContext,
        subscription: Any,
        selector: Selector,
        owner_id: uuid.UUID,
        *,
        queue_size: int,
        ping_interval_s: float,
        on_close: Callable[[], None] | None = None,
        granted: frozenset[str] = frozenset(),
    ) -> None:
        self.js = js
        self.on_close = on_close  # gives back the caller's connection slot
        self.subscription = subscription
        self.selector = selector
        self.owner_id = str(owner_id)
        # Only the caller's tenant's events, plus those of records granted to it by ACL.
        self.granted = granted
        self.ping_interval_s = ping_interval_s
        self.queue: asyncio.Queue[object] = asyncio.Queue(maxsize=queue_size + 1)
        self.queue_size = queue_size

    async def frames(self) -> AsyncIterator[str]:
        CONNECTIONS.inc()
        reader = asyncio.create_task(self._read(asyncio.current_task()), name="sse-reader")
        try:
            yield ": connected\n\n"
            while True:
                try:
                    item = await asyncio.wait_for(self.queue.get(), self.ping_interval_s)
                except TimeoutError:
                    yield PING
                    continue
                if item is _END:
                    return
                assert isinstance(item, str)
                yield item
        finally:
            CONNECTIONS.dec()
            if self.on_close is not None:
                self.on_close()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            await self._release()

    async def _read(self, response_task: asyncio.Task[Any] | None) -> None:
        while True:
            try:
                message = await self.subscription.next_msg(timeout=3600)
            except TimeoutError:
                continue
            frame = self._frame(message)
            if frame is None:
                continue
            if self.queue.qsize() >= self.queue_size:
                await self._drop_slow_client(response_task)
                return
            self.queue.put_nowait(frame)

    def _frame(self, message: Any) -> str | None:
        try:
            event = json.loads(message.data)
        except ValueError:
            return None
        own = event.get("owner_id") == self.owner_id
        if not (own or event.get("breadcrumb_id") in self.granted):
            return None
        if not self.selector.matches(event):
            return None
        data = message.data.decode()
        return f"id: {message.metadata.sequence.stream}\ndata: {data}\n\n"

    async def _drop_slow_client(self, response_task: asyncio.Task[Any] | None) -> None:
        DROPPED.inc()
        log.info("dropping a slow SSE client (%d frames behind)", self.queue_size)
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(RECONNECT)
        self.queue.put_nowait(_END)
        await self._release()
        await asyncio.sleep(SLOW_CLIENT_GRACE_S)
        if response_task is not None and not response_task.done():
            response_task.cancel()  # it never read the reconnect frame: stop waiting on it

    async def _release(self) -> None:
        """Unsubscribe and delete the consumer now rather than when it times out."""
        subscription, self.subscription = self.subscription, None
        if subscription is None:
            return
        consumer = getattr(subscription, "_consumer", None)
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()
        if consumer:
            with contextlib.suppress(Exception):
                await self.js.delete_consumer(STREAM_NAME, consumer)
