"""Waiting and stopping without losing a cancellation or waiting forever (cairn.tasks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from cairn.tasks import stop_task, stop_tasks, wait_set


async def _waits_in_a_loop(event: asyncio.Event) -> None:
    """A loop like the outbox relay's: wait for a wake-up (or a time), work, wait again."""
    while True:
        event.clear()
        await wait_set(event, 30)
        await asyncio.sleep(0)


async def test_a_cancellation_as_the_event_is_set_is_not_lost() -> None:
    event = asyncio.Event()
    task = asyncio.create_task(_waits_in_a_loop(event))
    await asyncio.sleep(0.01)
    event.set()  # the wake-up and the cancellation in the same loop iteration: with
    task.cancel()  # asyncio.wait_for on Python 3.11 the loop would run on
    done, _ = await asyncio.wait({task}, timeout=2)
    assert done and task.cancelled()


async def test_wait_set_says_whether_the_event_came() -> None:
    event = asyncio.Event()
    assert not await wait_set(event, 0.01)
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_set(event, 5)


async def _ignores_cancellation(stopped: asyncio.Event) -> None:
    while not stopped.is_set():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.01)


async def test_a_task_that_swallows_its_cancellation_is_named_not_waited_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stopped = asyncio.Event()
    stubborn = asyncio.create_task(_ignores_cancellation(stopped), name="stubborn")
    polite = asyncio.create_task(asyncio.sleep(30), name="polite")
    await asyncio.sleep(0)
    with caplog.at_level(logging.ERROR, logger="cairn.tasks"):
        running = await stop_tasks([stubborn, polite], grace_s=0.2)
    assert running == [stubborn]
    assert polite.cancelled()
    assert "stubborn did not stop" in caplog.text
    stopped.set()
    await stubborn


async def test_a_task_failing_as_it_stops_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def fails_when_cancelled() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("driver error instead of the cancellation") from None

    task = asyncio.create_task(fails_when_cancelled(), name="query")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="cairn.tasks"):
        await stop_task(task)
    assert "query failed while stopping" in caplog.text


async def test_the_callers_own_cancellation_goes_on() -> None:
    stopped = asyncio.Event()
    inner = asyncio.create_task(_ignores_cancellation(stopped), name="inner")
    outer = asyncio.create_task(stop_task(inner, grace_s=30))
    await asyncio.sleep(0.05)
    outer.cancel()
    done, _ = await asyncio.wait({outer}, timeout=2)
    stopped.set()
    await inner
    assert done and outer.cancelled()
