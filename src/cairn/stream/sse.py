"""One SSE connection: fed by the process's shared feed, filtered, bounded; served by
sse-starlette's ``EventSourceResponse`` (``stream.response``), which sends the frames and
pings and ends the response the moment the client goes away (``frames``' ``finally`` then
leaves the feed).

A frame goes out from the dispatch itself when the connection has nothing queued and
nothing being sent (``FrameWriter``, ``stream.eager``): one ``send`` per connection and no
task woken. Otherwise, and for the rest of a send that waits on a full socket, it goes
through the queue, which the response task empties in order. A client that falls more than
``queue_size`` frames behind gets a ``reconnect`` frame and is closed.

Resumption (``Last-Event-ID``): the connection joins the feed first, so every event after the
feed's position ``until`` reaches it, held back in ``backlog`` while it replays the events
after the client's id up to ``until`` on a consumer of its own. Then it sends the backlog
and goes live. Every frame passes through ``delivered`` (the highest sequence sent), so an
event seen both ways goes out once, and in order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import anyio
from nats.js import JetStreamContext
from prometheus_client import Counter, Gauge

from cairn.events.payloads import STREAM_NAME
from cairn.events.selectors import Selector
from cairn.stream.eager import Remainder
from cairn.stream.feed import Fanout, release
from cairn.stream.frames import CONNECTED, RECONNECT, frame_bytes
from cairn.stream.paths import Framing, connection_frame, path_frame
from cairn.tasks import stop_tasks

log = logging.getLogger(__name__)

CONNECTIONS = Gauge("cairn_sse_connections", "Open SSE connections")
DROPPED = Counter("cairn_sse_slow_clients_total", "SSE clients dropped for falling behind")
_END = b""
# A dropped slow client that still does not read gets this long before its task is cancelled.
SLOW_CLIENT_GRACE_S = 5.0
# A replay waits this long for its next message before it gives up waiting on the stream.
REPLAY_IDLE_S = 5.0


# What waits to go out on a connection: a frame, or the rest of one's send begun at dispatch.
Item = bytes | Remainder


class FrameWriter(Protocol):
    """The response of a connection, sending a frame from the dispatch."""

    def idle(self) -> bool:
        """Open, and sending nothing of its own (a ping)."""

    def write(self, frame: bytes) -> Remainder | None:
        """Send ``frame`` now; what is left of the send when the socket is full."""


class FrameQueue:
    """The frames waiting to go out on one connection, oldest first. asyncio.Queue did the
    same with more bookkeeping per frame, and the fan-out puts and gets one frame per
    connection per event."""

    __slots__ = ("_frames", "_reader", "_room", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit  # ``put`` waits while this many frames wait
        self._frames: deque[Item] = deque()
        self._reader: asyncio.Future[None] | None = None  # the response task, waiting
        self._room: asyncio.Future[None] | None = None  # ``put``, waiting

    def qsize(self) -> int:
        return len(self._frames)

    def empty(self) -> bool:
        return not self._frames

    def put_nowait(self, frame: Item) -> None:
        self._frames.append(frame)
        _wake(self._reader)

    async def put(self, frame: bytes) -> None:
        while len(self._frames) >= self.limit:
            self._room = asyncio.get_running_loop().create_future()
            await self._room
        self.put_nowait(frame)

    async def get(self) -> Item:
        while not self._frames:
            self._reader = asyncio.get_running_loop().create_future()
            await self._reader
        if self._room is not None:  # (the replay: one waiter at most)
            room, self._room = self._room, None
            _wake(room)
        return self._frames.popleft()

    def clear(self) -> None:
        for item in self._frames:
            if isinstance(item, Remainder):
                item.close()
        self._frames.clear()
        room, self._room = self._room, None
        _wake(room)


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class SseConnection:
    def __init__(
        self,
        feed: Fanout,
        selector: Selector,
        owner_id: uuid.UUID,
        *,
        queue_size: int,
        on_close: Callable[[], None] | None = None,
        granted: frozenset[str] = frozenset(),
        since: int | None = None,
        replay: tuple[JetStreamContext, Any] | None = None,
        paths: bool = False,
    ) -> None:
        self.feed = feed
        self.paths = paths  # also the tenant's debug-path frames (``stream.paths``)
        self.on_close = on_close  # gives back the caller's connection slot
        self.selector = selector
        self.owner_id = str(owner_id)
        # Only the caller's tenant's events, plus those of records granted to it by ACL.
        self.granted = granted
        self.queue = FrameQueue(limit=queue_size + 1)
        self.queue_size = queue_size
        # The highest stream sequence passed on (sent or filtered out): the client's
        # ``Last-Event-ID`` to begin with.
        self.delivered = since or 0
        self.backlog: list[tuple[int, bytes]] | None = None  # live frames held during replay
        self.dropped = False
        self.writer: FrameWriter | None = None  # the response, once it has begun
        self._reading = False  # the response task waits for a frame: it is sending none
        self._replay = replay  # (JetStream, an ordered consumer after ``since``)
        self._attached = False
        self._closed = False
        self._response_task: asyncio.Task[Any] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def deliver(self, seq: int, frame: bytes) -> None:
        """A live frame from the feed (already matched against this connection)."""
        if seq <= self.delivered or self.dropped:
            return
        if self.backlog is not None:
            self.backlog.append((seq, frame))
            if len(self.backlog) > self.queue_size:
                self._drop("fell behind during its replay")
            return
        self._send(seq, frame)

    async def frames(self) -> AsyncIterator[bytes]:
        CONNECTIONS.inc()
        self._response_task = asyncio.current_task()
        queue = self.queue
        try:
            await self._join()
            yield CONNECTED
            while True:
                self._reading = True
                item = await queue.get()
                self._reading = False
                if item is _END:
                    yield RECONNECT
                    return
                if isinstance(item, Remainder):
                    await item  # a frame the dispatch began to send: the socket was full
                else:
                    yield item
        finally:
            self.writer, self._reading = None, False
            CONNECTIONS.dec()
            await self.close()

    async def end_on(self, shutdown: anyio.Event) -> None:
        """The server is stopping: end with a ``reconnect`` frame after the frames already
        queued, so the client resumes at once (on another process, or on this one after its
        restart) instead of reading a cut-off response."""
        await shutdown.wait()
        self._leave()
        self.queue.put_nowait(_END)

    async def close(self) -> None:
        """Leave the feed, stop the replay, give the caller's slot back (once)."""
        self._leave()
        self._give_back_slot()
        replays = [task for task in self._tasks if task.get_name() == "sse-replay"]
        await stop_tasks(replays, failures=logging.DEBUG)  # a client left mid-replay
        await self._release_replay()

    async def _join(self) -> None:
        """Join the feed; with a replay, hold live frames back until it caught up."""
        until = self.feed.attach(self)
        self._attached = True
        if self._replay is None:
            return
        if self.delivered >= until:
            await self._release_replay()  # nothing the feed has not yet dispatched
            return
        self.backlog = []
        self._start(self._run_replay(until), "sse-replay")

    async def _run_replay(self, until: int) -> None:
        assert self._replay is not None
        js, subscription = self._replay
        try:
            await self._replay_until(js, subscription, until)
        except Exception as error:  # NATS went away mid-replay: the client resumes later
            log.warning("SSE replay failed (%s)", error)
            self._drop("its replay failed")
        finally:
            await self._release_replay()
        self._go_live()

    async def _replay_until(self, js: JetStreamContext, subscription: Any, until: int) -> None:
        while self.delivered < until and not self.dropped:
            try:
                message = await subscription.next_msg(timeout=REPLAY_IDLE_S)
            except TimeoutError:
                if await _replay_left(js, self.delivered, until):
                    self._drop("its replay stalled")  # it resumes from its last id
                return
            seq = message.metadata.sequence.stream
            if seq > self.delivered:
                frame = self._frame(seq, message.data)
                if frame is not None:
                    await self.queue.put(frame)  # the replay waits for a slow reader
                self.delivered = seq
            if message.metadata.num_pending == 0:
                return  # the stream's end: nothing between here and ``until`` is left

    async def _release_replay(self) -> None:
        replay, self._replay = self._replay, None
        if replay is not None:
            await release(*replay)

    def _go_live(self) -> None:
        backlog, self.backlog = self.backlog or [], None
        for seq, frame in backlog:
            if seq > self.delivered and not self.dropped:
                self._send(seq, frame)

    def _send(self, seq: int, frame: bytes) -> None:
        if self.queue.qsize() >= self.queue_size:
            self._drop(f"{self.queue_size} frames behind")
            return
        self.delivered = seq
        writer = self.writer
        if self._reading and writer is not None and self.queue.empty() and writer.idle():
            self._write(writer, frame)
        else:
            self.queue.put_nowait(frame)

    def _write(self, writer: FrameWriter, frame: bytes) -> None:
        """Send from the dispatch; what a full socket leaves goes first in the queue."""
        try:
            rest = writer.write(frame)
        except Exception as error:  # the response's own task would have ended on it
            log.warning("an SSE send failed (%s)", error)
            self._drop("its send failed")
            return
        if rest is not None:
            self.queue.put_nowait(rest)

    def _frame(self, seq: int, data: bytes) -> bytes | None:
        """The replay's filter and framing: the same rules as the feed's."""
        try:
            event = json.loads(data)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        if event.get("owner_id") == self.owner_id:
            path = path_frame(event) if self.paths else None
            framing = Framing(seq, data, path)
            return connection_frame(framing, event, self.selector, paths=self.paths)
        if event.get("breadcrumb_id") in self.granted and self.selector.matches(event):
            return frame_bytes(seq, data)
        return None

    def _drop(self, reason: str) -> None:
        """Leave the feed and end with a ``reconnect`` frame: the client resumes from the
        last id it received."""
        if self.dropped:
            return
        self.dropped = True
        DROPPED.inc()
        log.info("dropping a slow SSE client (%s)", reason)
        self._leave()
        self._give_back_slot()  # its reconnection must not be refused for it
        self.backlog = None
        self.queue.clear()
        self.queue.put_nowait(_END)
        if self._response_task is not None:
            self._start(_cancel_later(self._response_task), "sse-drop")

    def _leave(self) -> None:
        if self._attached:
            self._attached = False
            self.feed.detach(self)

    def _give_back_slot(self) -> None:
        if not self._closed:
            self._closed = True
            if self.on_close is not None:
                self.on_close()

    def _start(self, work: Any, name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _replay_left(js: JetStreamContext, after: int, until: int) -> bool:
    """Whether the stream still holds events in (``after``, ``until``] (a quiet replay
    either waits on NATS or its range has expired)."""
    try:
        state = (await js.stream_info(STREAM_NAME)).state
    except Exception:
        return True
    return bool(state.last_seq > after and state.first_seq <= until)


async def _cancel_later(response_task: asyncio.Task[Any]) -> None:
    """The reconnect frame is out; a client that never reads it would hold the response
    task on a full socket forever. Cancelling the task that iterates ``frames`` cancels
    the response's task group. (sse-starlette's ``send_timeout`` would arm a timer on every
    send of every connection, and close a client that is slow for a moment, not behind.)"""
    await asyncio.sleep(SLOW_CLIENT_GRACE_S)
    if not response_task.done():
        response_task.cancel()
