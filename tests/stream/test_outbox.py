"""A connection's outbox: frames in order, the response task woken per frame, and a bounded
``put`` for the replay."""

from __future__ import annotations

import asyncio

import pytest

from cairn.stream.sse import Outbox


async def test_frames_come_out_in_order_and_a_waiting_reader_is_woken() -> None:
    outbox = Outbox(limit=10)
    reader = asyncio.create_task(outbox.get())
    await asyncio.sleep(0)
    assert not reader.done()
    outbox.put_nowait(b"1")
    outbox.put_nowait(b"2")
    assert await reader == b"1"
    assert await outbox.get() == b"2"
    assert outbox.empty()


async def test_put_waits_for_room_and_a_get_makes_it() -> None:
    outbox = Outbox(limit=2)
    await outbox.put(b"1")
    await outbox.put(b"2")
    putter = asyncio.create_task(outbox.put(b"3"))
    await asyncio.sleep(0.01)
    assert not putter.done() and outbox.qsize() == 2
    assert await outbox.get() == b"1"
    await asyncio.wait_for(putter, 1)
    assert [await outbox.get() for _ in range(2)] == [b"2", b"3"]


async def test_clear_lets_a_waiting_put_through() -> None:
    outbox = Outbox(limit=1)
    await outbox.put(b"old")
    putter = asyncio.create_task(outbox.put(b"new"))
    await asyncio.sleep(0.01)
    outbox.clear()
    await asyncio.wait_for(putter, 1)
    assert outbox.qsize() == 1 and await outbox.get() == b"new"


async def test_a_cancelled_reader_leaves_the_outbox_usable() -> None:
    outbox = Outbox(limit=10)
    reader = asyncio.create_task(outbox.get())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    outbox.put_nowait(b"1")  # wakes nobody, keeps the frame
    assert await asyncio.wait_for(outbox.get(), 1) == b"1"
