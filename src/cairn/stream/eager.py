"""Running a coroutine at once, in the caller, up to its first real wait.

The feed hands one event to hundreds of connections in one synchronous dispatch. An ASGI
``send`` on a socket with room finishes without ever waiting (uvicorn writes and returns),
so running it right there costs one call chain per connection, where a task per
connection cost a wake-up, a loop turn and a resumption of the response's coroutines.
When the socket is full, the send waits on flow control: what remains of it is handed back
as an awaitable for the connection's own task to finish, so the dispatch never waits.

Python 3.12's eager tasks do the same in C; on 3.11 this is the whole of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from typing import Any


def begin(awaitable: Awaitable[None]) -> Remainder | None:
    """Run ``awaitable`` until it finishes (None) or first waits: the rest, to be awaited.
    Its exceptions propagate from here when it fails before waiting."""
    steps = awaitable.__await__()
    try:
        waiting = steps.send(None)
    except StopIteration:
        return None
    return Remainder(steps, waiting)


class Remainder:
    """A coroutine begun elsewhere, suspended on ``waiting`` (what it yielded to the loop):
    awaiting this hands ``waiting`` to the awaiting task and resumes the coroutine as that
    task would have, passing on what the task sends or throws (a cancellation included)."""

    __slots__ = ("_steps", "_waiting")

    def __init__(self, steps: Generator[Any, Any, None], waiting: Any) -> None:
        self._steps = steps
        self._waiting = waiting

    def __await__(self) -> Generator[Any, Any, None]:
        steps, waiting = self._steps, self._waiting
        while True:
            try:
                sent = yield waiting
            except BaseException as error:  # passed on, as a task would
                try:
                    waiting = steps.throw(error)
                except StopIteration:
                    return
            else:
                try:
                    waiting = steps.send(sent)
                except StopIteration:
                    return

    def close(self) -> None:
        """Abandon the rest (its connection is gone): its ``finally`` blocks run now."""
        self._steps.close()
