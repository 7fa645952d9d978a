"""Waiting for a condition that another task or process brings about."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any


async def eventually(
    check: Callable[[], Any],
    timeout: float = 15.0,
    *,
    tolerate: tuple[type[BaseException], ...] = (),
    interval: float = 0.02,
) -> None:
    """Poll ``check`` (plain or async; any truthy result holds) until it holds; fail after
    ``timeout`` seconds. Errors of the ``tolerate`` types count as "not yet"."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if inspect.isawaitable(result):
                result = await result
        except tolerate:
            result = False
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s")
        await asyncio.sleep(interval)
