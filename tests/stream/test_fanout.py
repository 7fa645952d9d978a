"""The shared feed's in-memory fan-out and a connection's replay → live hand-over, without
NATS: every interleaving here is chosen by the test."""

from __future__ import annotations

import asyncio
import json
import uuid
from types import SimpleNamespace
from typing import Any

from cairn.events.selectors import Selector
from cairn.stream.feed import Fanout
from cairn.stream.frames import CONNECTED, RECONNECT
from cairn.stream.sse import SseConnection


def _event(owner: uuid.UUID, record: str = "r", **fields: Any) -> bytes:
    body = {"owner_id": str(owner), "breadcrumb_id": record, "tags": [], **fields}
    return json.dumps(body).encode()


class FakeMessage:
    def __init__(self, seq: int, data: bytes, pending: int) -> None:
        self.data = data
        self.metadata = SimpleNamespace(sequence=SimpleNamespace(stream=seq), num_pending=pending)


class FakeSubscription:
    """Stands in for a replay's ordered consumer: hands out queued messages."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[FakeMessage] = asyncio.Queue()
        self.unsubscribed = False

    async def next_msg(self, timeout: float) -> FakeMessage:
        return await asyncio.wait_for(self.messages.get(), timeout)

    async def unsubscribe(self) -> None:
        self.unsubscribed = True


class FakeJetStream:
    async def delete_consumer(self, stream: str, consumer: str) -> None:
        pass


class Recorder:
    """A listener that keeps what the fan-out gives it."""

    def __init__(self, owner: uuid.UUID, selector: Selector, granted: frozenset[str]) -> None:
        self.owner_id = str(owner)
        self.selector = selector
        self.granted = granted
        self.paths = False
        self.frames: list[int] = []

    def deliver(self, seq: int, frame: bytes) -> None:
        assert frame.startswith(b"id: %d\n" % seq)
        self.frames.append(seq)


def _recorder(
    feed: Fanout, owner: uuid.UUID, granted: frozenset[str] = frozenset(), **selector: Any
) -> Recorder:
    recorder = Recorder(owner, Selector(**selector), granted)
    feed.attach(recorder)
    return recorder


def test_each_connection_gets_its_tenants_matching_events_and_its_grants() -> None:
    feed, a, b = Fanout(), uuid.uuid4(), uuid.uuid4()
    a_all, a_red = _recorder(feed, a), _recorder(feed, a, any_tags=["red"])
    b_all = _recorder(feed, b, granted=frozenset({"shared"}))
    b_red = _recorder(feed, b, granted=frozenset({"shared"}), any_tags=["red"])
    feed.dispatch(1, _event(a, tags=["red"]))
    feed.dispatch(2, _event(a, "shared", tags=["blue"]))
    feed.dispatch(3, _event(b, tags=["red"]))
    feed.dispatch(4, _event(a, "shared", tags=["red"]))
    assert a_all.frames == [1, 2, 4] and a_red.frames == [1, 4]
    assert b_all.frames == [2, 3, 4] and b_red.frames == [3, 4]


def test_a_resubscription_dispatches_nothing_twice() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    recorder = _recorder(feed, owner)
    for seq in (1, 2, 2, 1, 3):
        feed.dispatch(seq, _event(owner))
    assert recorder.frames == [1, 2, 3]


def test_a_detached_connection_gets_nothing_and_leaves_no_index_behind() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    recorder = _recorder(feed, owner, granted=frozenset({"x"}))
    feed.detach(recorder)
    feed.dispatch(1, _event(owner))
    assert recorder.frames == [] and feed.listeners == 0
    assert not feed._groups and not feed._grants


async def test_a_slow_client_is_dropped_and_the_others_get_every_event() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    slow = SseConnection(feed, Selector(), owner, queue_size=5)
    fast = SseConnection(feed, Selector(), owner, queue_size=5)
    slow_frames, fast_frames = slow.frames(), fast.frames()
    assert await slow_frames.__anext__() == CONNECTED
    assert await fast_frames.__anext__() == CONNECTED
    received = []
    for seq in range(1, 41):
        feed.dispatch(seq, _event(owner))
        received.append(await fast_frames.__anext__())  # the fast one keeps reading
    assert [int(frame.split(b"\n")[0][4:]) for frame in received] == list(range(1, 41))
    assert slow.dropped and not fast.dropped and feed.listeners == 1
    assert await slow_frames.__anext__() == RECONNECT
    await fast_frames.aclose()


async def test_replay_hands_over_to_the_live_feed_without_gaps_or_duplicates() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    feed.last_seq = 10  # the feed's position when the client comes back with id 3
    replay = FakeSubscription()
    connection = SseConnection(
        feed, Selector(), owner, queue_size=100, since=3,
        replay=(FakeJetStream(), replay),  # type: ignore[arg-type]
    )  # fmt: skip
    frames = connection.frames()
    assert await frames.__anext__() == CONNECTED
    for seq in (11, 12, 13):  # live events come first, while the replay has not begun
        feed.dispatch(seq, _event(owner))
    for seq in range(4, 13):  # the replay's consumer also sees 11 and 12
        replay.messages.put_nowait(FakeMessage(seq, _event(owner), pending=13 - seq))
    ids = [int((await frames.__anext__()).split(b"\n")[0][4:]) for _ in range(10)]
    feed.dispatch(14, _event(owner))
    ids.append(int((await frames.__anext__()).split(b"\n")[0][4:]))
    assert ids == list(range(4, 15))
    assert replay.unsubscribed and connection.backlog is None
    await frames.aclose()


async def test_replay_that_finds_its_last_event_expired_still_goes_live() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    feed.last_seq = 10
    replay = FakeSubscription()
    connection = SseConnection(
        feed, Selector(), owner, queue_size=100, since=5,
        replay=(FakeJetStream(), replay),  # type: ignore[arg-type]
    )  # fmt: skip
    frames = connection.frames()
    await frames.__anext__()
    feed.dispatch(11, _event(owner))
    for seq in (6, 7, 11):  # 8 to 10 are gone from the stream
        replay.messages.put_nowait(FakeMessage(seq, _event(owner), pending=11 - seq))
    ids = [int((await frames.__anext__()).split(b"\n")[0][4:]) for _ in range(3)]
    feed.dispatch(12, _event(owner))
    ids.append(int((await frames.__anext__()).split(b"\n")[0][4:]))
    assert ids == [6, 7, 11, 12]
    await frames.aclose()


async def test_replay_filters_like_the_feed() -> None:
    feed, owner = Fanout(), uuid.uuid4()
    feed.last_seq = 4
    replay = FakeSubscription()
    connection = SseConnection(
        feed, Selector(any_tags=["red"]), owner, queue_size=100,
        since=0, replay=(FakeJetStream(), replay), granted=frozenset({"shared"}),  # type: ignore[arg-type]
    )  # fmt: skip
    frames = connection.frames()
    await frames.__anext__()
    other = uuid.uuid4()
    for seq, data in enumerate(
        [
            _event(other, tags=["red"]),
            _event(owner, tags=["blue"]),
            _event(other, "shared", tags=["red"]),
            _event(owner, tags=["red"]),
        ],
        start=1,
    ):
        replay.messages.put_nowait(FakeMessage(seq, data, pending=4 - seq))
    ids = [int((await frames.__anext__()).split(b"\n")[0][4:]) for _ in range(2)]
    assert ids == [3, 4]
    await frames.aclose()
