"""The process's one live event feed: a single ordered JetStream consumer whose messages are
parsed once and handed to every SSE connection they are meant for.

One consumer per connection made NATS deliver, and nats-py decode, every event once per
subscriber. Here each event is parsed once, its frame is built once, and the connections are
found by index: by tenant, then by distinct selector (evaluated once per event), plus the
records other tenants granted ``subscribe`` on.

``last_seq`` is the feed's position: every event up to it was dispatched (or came before the
feed started); every later one will be. Connections that replay from ``Last-Event-ID`` read
up to it on their own consumer and then take the rest from here (see ``SseConnection``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from prometheus_client import Counter

from cairn.events.nats_client import NatsHolder
from cairn.events.payloads import STREAM_NAME, STREAM_SUBJECTS
from cairn.events.selectors import Selector
from cairn.stream.paths import Framing, connection_frame, path_frame
from cairn.tasks import stop_task

log = logging.getLogger(__name__)

FEED_EVENTS = Counter("cairn_sse_feed_events_total", "Events the shared SSE feed dispatched")
FEED_RESTARTS = Counter("cairn_sse_feed_restarts_total", "Times the shared SSE feed resubscribed")
RESTART_DELAY_S = 0.5
START_TIMEOUT_S = 5.0


class Listener(Protocol):
    """An SSE connection as the feed sees it."""

    owner_id: str
    granted: frozenset[str]
    selector: Selector
    paths: bool  # also the tenant's debug-path frames (``stream.paths``)

    def deliver(self, seq: int, frame: bytes) -> None: ...


def selector_key(selector: Selector, paths: bool = False) -> str:
    return selector.model_dump_json(exclude_none=True) + ("+paths" if paths else "")


class _Group:
    """The connections of one tenant with the same selector (and the same wish for path
    frames): matched once per event."""

    def __init__(self, selector: Selector, paths: bool) -> None:
        self.selector = selector
        self.paths = paths
        self.members: tuple[Listener, ...] = ()


class Fanout:
    """The in-memory index and dispatch, without NATS (tested on its own)."""

    def __init__(self) -> None:
        self.last_seq = 0
        self._groups: dict[str, dict[str, _Group]] = {}
        self._grants: dict[str, tuple[Listener, ...]] = {}

    @property
    def listeners(self) -> int:
        return sum(len(g.members) for groups in self._groups.values() for g in groups.values())

    def attach(self, listener: Listener) -> int:
        """Start dispatching to ``listener``; returns the position it is dispatched after."""
        groups = self._groups.setdefault(listener.owner_id, {})
        key = selector_key(listener.selector, listener.paths)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(listener.selector, listener.paths)
        group.members = (*group.members, listener)
        for record_id in listener.granted:
            self._grants[record_id] = (*self._grants.get(record_id, ()), listener)
        return self.last_seq

    def detach(self, listener: Listener) -> None:
        groups = self._groups.get(listener.owner_id, {})
        key = selector_key(listener.selector, listener.paths)
        group = groups.get(key)
        if group is not None:
            group.members = tuple(m for m in group.members if m is not listener)
            if not group.members:
                del groups[key]
        if not groups:
            self._groups.pop(listener.owner_id, None)
        for record_id in listener.granted:
            left = tuple(m for m in self._grants.get(record_id, ()) if m is not listener)
            if left:
                self._grants[record_id] = left
            else:
                self._grants.pop(record_id, None)

    def dispatch(self, seq: int, data: bytes) -> None:
        """One event: parsed once, framed once, given to every connection it is meant for.
        Sequences at or below ``last_seq`` were dispatched already (a resubscription)."""
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        try:
            event = json.loads(data)
        except ValueError:
            return
        if not isinstance(event, Mapping):
            return
        FEED_EVENTS.inc()
        owner = event.get("owner_id")
        groups = tuple(self._groups.get(owner, {}).values()) if owner else ()
        wants_paths = any(group.paths for group in groups)
        framing = Framing(seq, data, path_frame(event) if wants_paths else None)
        for group in groups:
            frame = connection_frame(framing, event, group.selector, paths=group.paths)
            if frame is not None:
                for listener in group.members:
                    listener.deliver(seq, frame)
        # Records another tenant granted ``subscribe`` on (their owner is not the caller's).
        for listener in self._grants.get(str(event.get("breadcrumb_id")), ()):
            if listener.owner_id != owner and listener.selector.matches(event):
                listener.deliver(seq, framing.record)


class EventFeed(Fanout):
    """The fan-out fed by one ordered JetStream consumer, started on first use and
    resubscribed where it left off when the NATS connection comes back."""

    def __init__(self, holder: NatsHolder) -> None:
        super().__init__()
        self.holder = holder
        self._subscription: Any = None
        self._lock = asyncio.Lock()
        self._restart: asyncio.Task[None] | None = None
        self._closed = False
        self._positioned = False
        holder.on_reconnect.append(self._on_reconnect)

    @property
    def running(self) -> bool:
        return self._subscription is not None

    @property
    def consumer(self) -> str | None:
        return getattr(self._subscription, "_consumer", None)

    async def start(self) -> None:
        """Subscribe if not yet subscribed; raises when JetStream cannot be reached."""
        if self._subscription is not None:
            return
        async with asyncio.timeout(START_TIMEOUT_S):  # a resubscription may hold the lock
            async with self._lock:
                if self._subscription is None and not self._closed:
                    await self._subscribe()

    async def close(self) -> None:
        self._closed = True
        if self._restart is not None:
            await stop_task(self._restart)
        await self._unsubscribe()

    async def _subscribe(self) -> None:
        js = self.holder.jetstream()
        if js is None:
            raise ConnectionError("NATS is not connected")
        info = await js.stream_info(STREAM_NAME)
        if info.state.last_seq < self.last_seq:  # a new stream: its sequences start over
            log.warning("stream %s restarted at sequence %d", STREAM_NAME, info.state.last_seq)
            self.last_seq = info.state.last_seq
        if not self._positioned:  # the first start: only what comes next
            self.last_seq = info.state.last_seq
            self._positioned = True
        self._subscription = await _ordered_consumer(js, self.last_seq, self._on_message)
        log.info("shared SSE feed subscribed after sequence %d", self.last_seq)

    async def _on_message(self, message: Any) -> None:
        self.dispatch(message.metadata.sequence.stream, message.data)

    async def _unsubscribe(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            await release(self.holder.jetstream(), subscription)

    def _on_reconnect(self) -> None:
        """The server may have lost the consumer (it lives in memory): subscribe anew from
        ``last_seq``, so nothing is missed and nothing dispatched twice."""
        if self._subscription is None or self._closed:
            return  # not started yet: the next connection starts it
        if self._restart is None or self._restart.done():
            self._restart = asyncio.create_task(self._resubscribe(), name="sse-feed-restart")

    async def _resubscribe(self) -> None:
        async with self._lock:
            await self._unsubscribe()
            while not self._closed:
                FEED_RESTARTS.inc()
                try:
                    await self._subscribe()
                    return
                except Exception as error:
                    log.warning("shared SSE feed cannot resubscribe yet (%s)", error)
                    await asyncio.sleep(RESTART_DELAY_S)


async def _ordered_consumer(js: JetStreamContext, after: int, callback: Any) -> Any:
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after + 1)
    config.inactive_threshold = 30.0  # a safety net: it is deleted on close
    subscription = await js.subscribe(
        STREAM_SUBJECTS, stream=STREAM_NAME, ordered_consumer=True, config=config, cb=callback
    )
    # nats-py recreates an ordered consumer after missed heartbeats from the last stream
    # sequence it saw, which is 0 before the first message: the whole stream again.
    jsi = getattr(getattr(subscription, "_sub", None), "_jsi", None)
    if jsi is not None:
        jsi._sseq = after
    return subscription


async def open_replay(js: JetStreamContext, after: int) -> Any:
    """An ordered consumer of the events after ``after``, for one connection's replay."""
    return await _ordered_consumer(js, after, None)


async def release(js: JetStreamContext | None, subscription: Any) -> None:
    """Unsubscribe, stop nats-py's heartbeat and flow-control tasks, delete the consumer."""
    consumer = getattr(subscription, "_consumer", None)
    with contextlib.suppress(Exception):
        await subscription.unsubscribe()
    jsi = getattr(getattr(subscription, "_sub", None), "_jsi", None)
    for task in (getattr(jsi, "_hbtask", None), getattr(jsi, "_fctask", None)):
        if task is not None:
            task.cancel()
    if consumer and js is not None:
        with contextlib.suppress(Exception):
            await js.delete_consumer(STREAM_NAME, consumer)
