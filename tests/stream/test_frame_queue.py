"""A connection's frame queue: frames in order, the response task woken per frame, and a bounded
``put`` for the replay."""

from __future__ import annotations

import asyncio

import pytest

from cairn.stream.sse import FrameQueue


async def test_frames_come_out_in_order_and_a_waiting_reader_is_woken() -> None:
    queue = FrameQueue(limit=10)
    reader = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not reader.done()
    queue.put_nowait(b"1")
    queue.put_nowait(b"2")
    assert await reader == b"1"
    assert await queue.get() == b"2"
    assert queue.empty()


async def test_put_waits_for_room_and_a_get_makes_it() -> None:
    queue = FrameQueue(limit=2)
    await queue.put(b"1")
    await queue.put(b"2")
    putter = asyncio.create_task(queue.put(b"3"))
    await asyncio.sleep(0.01)
    assert not putter.done() and queue.qsize() == 2
    assert await queue.get() == b"1"
    await asyncio.wait_for(putter, 1)
    assert [await queue.get() for _ in range(2)] == [b"2", b"3"]


async def test_clear_lets_a_waiting_put_through() -> None:
    queue = FrameQueue(limit=1)
    await queue.put(b"old")
    putter = asyncio.create_task(queue.put(b"new"))
    await asyncio.sleep(0.01)
    queue.clear()
    await asyncio.wait_for(putter, 1)
    assert queue.qsize() == 1 and await queue.get() == b"new"


async def test_a_cancelled_reader_leaves_the_outbox_usable() -> None:
    queue = FrameQueue(limit=10)
    reader = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    queue.put_nowait(b"1")  # wakes nobody, keeps the frame
    assert await asyncio.wait_for(queue.get(), 1) == b"1"
