"""``stream.eager``: a coroutine run in the caller up to its first wait, the rest awaited
by a task as if it had run there all along."""

from __future__ import annotations

import asyncio

import pytest

from cairn.stream.eager import begin


async def _steps(log: list[str], gate: asyncio.Event) -> None:
    try:
        log.append("begun")
        await gate.wait()
        log.append("resumed")
        await asyncio.sleep(0)
        log.append("done")
    finally:
        log.append("finally")


async def _quick(log: list[str]) -> None:
    log.append("done")


async def test_a_coroutine_that_never_waits_is_done_in_the_call() -> None:
    log: list[str] = []
    assert begin(_quick(log)) is None and log == ["done"]


async def test_the_rest_runs_in_the_task_that_awaits_it() -> None:
    log: list[str] = []
    gate = asyncio.Event()
    rest = begin(_steps(log, gate))
    assert rest is not None and log == ["begun"]
    finishing = asyncio.ensure_future(rest)
    await asyncio.sleep(0.01)
    assert log == ["begun"]
    gate.set()
    await asyncio.wait_for(finishing, 1)
    assert log == ["begun", "resumed", "done", "finally"]


async def test_cancelling_the_awaiting_task_cancels_the_rest() -> None:
    log: list[str] = []
    rest = begin(_steps(log, asyncio.Event()))
    assert rest is not None
    finishing = asyncio.ensure_future(rest)
    await asyncio.sleep(0.01)
    finishing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishing
    assert log == ["begun", "finally"]


async def test_an_abandoned_rest_is_closed() -> None:
    log: list[str] = []
    rest = begin(_steps(log, asyncio.Event()))
    assert rest is not None
    rest.close()
    assert log == ["begun", "finally"]


async def test_a_failure_before_the_first_wait_is_raised_by_begin() -> None:
    async def failing() -> None:
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        begin(failing())
