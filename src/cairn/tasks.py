"""Waiting and stopping in asyncio without losing a cancellation or waiting forever.

On Python 3.11 ``asyncio.wait_for`` returns its inner result when the inner awaitable
finishes in the same loop iteration as the waiting task is cancelled: the cancellation is
lost. A loop that waits that way (for a wake-up event, say) then runs on after being told
to stop, and whoever awaits it after one ``cancel()`` waits forever. ``asyncio.timeout``
keeps the cancellation, so Cairn's code waits with it (ruff bans ``asyncio.wait_for`` in
``src``). Stopping tasks is bounded besides, so that a task that does swallow its
cancellation is reported by name instead of hanging a shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

STOP_GRACE_S = 10.0


async def wait_set(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait at most ``timeout_s`` for ``event``; whether it is set."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout_s):
            await event.wait()
    return event.is_set()


async def stop_tasks(
    tasks: Iterable[asyncio.Task[Any]],
    *,
    grace_s: float = STOP_GRACE_S,
    failures: int = logging.WARNING,
) -> list[asyncio.Task[Any]]:
    """Cancel ``tasks`` and wait (at most ``grace_s``) for them to end; returns the ones
    still running then, each logged as an error. A task that failed while stopping is
    logged at level ``failures`` (cancelled mid-query, a driver may raise its own error
    instead). A cancellation of the caller meanwhile goes on to the caller."""
    tasks = [task for task in tasks if not task.done()]
    for task in tasks:
        task.cancel()
    if not tasks:
        return []
    done, running = await asyncio.wait(tasks, timeout=grace_s)
    for task in done:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.log(failures, "%s failed while stopping", task.get_name(), exc_info=error)
    for task in running:
        log.error(
            "%s did not stop within %.0f s of its cancellation; left running",
            task.get_name(), grace_s,
        )  # fmt: skip
    return list(running)


async def stop_task(task: asyncio.Task[Any], *, grace_s: float = STOP_GRACE_S) -> None:
    """:func:`stop_tasks` of one task."""
    await stop_tasks([task], grace_s=grace_s)
