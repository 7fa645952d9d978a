"""``/events/stream`` as an iterator of ``Event``s that survives disconnects.

Each frame's ``id`` is its JetStream sequence. The stream remembers the last one it yielded;
after a dropped connection, a ``reconnect`` frame, a silent connection or a 429/503 it
connects again with ``Last-Event-ID`` and the server replays what was missed. Any frame at
or below the remembered sequence is dropped, so no event is yielded twice.

With ``paths=True`` the server also sends debug-path frames (``path_started``,
``path_waypoint``, ``path_resolved``, ``path_abandoned``), yielded as ``Event``s whose
``path`` holds the frame. One that precedes its event's record frame comes without an id; it
is held until that frame (which has the id) arrives, and dropped if the connection ends
first: the resumed stream sends it again. So path frames too are yielded once.

The frame parser (``_frames``) is written rather than taken from a library: the client depends on
httpx and pydantic only, and Cairn sends a small subset of SSE (``id``, ``data``, comments).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, overload

import httpx

from cairn_client._frames import RECONNECT, Cursor, Frame, FrameDecoder
from cairn_client._retry import RETRIED_STATUSES, retry_after_s
from cairn_client._routes import ROUTES
from cairn_client.errors import CairnError, error_from, unreachable
from cairn_client.models import Event

if TYPE_CHECKING:
    from cairn_client._client import AsyncClient, Client

P = ParamSpec("P")
__all__ = [
    "RECONNECT",
    "AsyncEventStream",
    "Cursor",
    "EventStream",
    "Frame",
    "FrameDecoder",
    "StreamOptions",
    "stream",
]


@dataclass
class StreamOptions:
    """``read_timeout_s``: the server pings every 15 s, so a longer silence is a dead
    connection. ``max_reconnects``: failed connections in a row before giving up (``None``:
    never). ``stop_after_s``: end the iteration after this long."""

    params: dict[str, str]
    since: int | None = None
    read_timeout_s: float = 45.0
    max_reconnects: int | None = None
    stop_after_s: float | None = None
    backoff_s: float = 0.25
    max_backoff_s: float = 10.0


@dataclass
class _Attempts:
    """The bookkeeping both iterators share: deadline, failures in a row, next delay."""

    options: StreamOptions
    cursor: Cursor
    failures: int = 0
    deadline: float | None = None
    pause: float | None = None  # the server's Retry-After, for the next delay

    def __post_init__(self) -> None:
        if self.options.stop_after_s is not None:
            self.deadline = time.monotonic() + self.options.stop_after_s

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def request(self) -> dict[str, Any]:
        read = self.options.read_timeout_s
        if self.deadline is not None:
            read = max(0.01, min(read, self.deadline - time.monotonic()))
        return {
            "method": "GET",
            "url": ROUTES["events"][1],
            "params": self.options.params,
            "headers": self.cursor.headers(),
            "timeout": httpx.Timeout(10.0, read=read),
        }

    def opened(self, response: httpx.Response) -> None:
        """Raise a refusal that reconnecting cannot cure; a 429/503 is retried."""
        if response.status_code == 200:
            self.failures = 0
            return
        error = error_from(response)
        if response.status_code not in RETRIED_STATUSES:
            raise error
        self.failed(error, retry_after_s(response.headers.get("retry-after")))

    def failed(self, error: CairnError, asked: float | None = None) -> None:
        self.failures += 1
        limit = self.options.max_reconnects
        if limit is not None and self.failures > limit:
            raise error
        self.pause = asked

    def delay(self) -> float:
        """Seconds before the next connection (``0`` after a clean end or a reconnect ask)."""
        asked, self.pause = self.pause, None
        if self.failures == 0:
            return 0.0
        if asked is not None:
            return asked
        backoff = self.options.backoff_s * 2.0 ** (self.failures - 1)
        return min(self.options.max_backoff_s, backoff) * random.uniform(0.5, 1.0)


class EventStream:
    """Iterate for events; ``close()`` (or leaving the ``with`` block) ends the stream."""

    def __init__(self, http: httpx.Client, options: StreamOptions) -> None:
        self._http = http
        self._attempts = _Attempts(options, Cursor(options.since))
        self._events = self._run()

    @property
    def last_event_id(self) -> int | None:
        return self._attempts.cursor.last

    def __iter__(self) -> Iterator[Event]:
        return self._events

    def __next__(self) -> Event:
        return next(self._events)

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._events.close()

    def _run(self) -> Generator[Event, None, None]:
        attempts = self._attempts
        while not attempts.expired():
            try:
                with self._http.stream(**attempts.request()) as response:
                    if response.status_code != 200:
                        response.read()
                    attempts.opened(response)
                    if response.status_code == 200:
                        yield from _events(response.iter_lines(), attempts.cursor)
            except httpx.TransportError as error:
                attempts.failed(unreachable(error))
            time.sleep(0 if attempts.expired() else attempts.delay())


class AsyncEventStream:
    """``async for`` events; ``aclose()`` (or leaving ``async with``) ends the stream."""

    def __init__(self, http: httpx.AsyncClient, options: StreamOptions) -> None:
        self._http = http
        self._attempts = _Attempts(options, Cursor(options.since))
        self._events = self._run()

    @property
    def last_event_id(self) -> int | None:
        return self._attempts.cursor.last

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events

    async def __anext__(self) -> Event:
        return await anext(self._events)

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._events.aclose()

    async def _run(self) -> AsyncGenerator[Event, None]:
        attempts = self._attempts
        while not attempts.expired():
            try:
                async with self._http.stream(**attempts.request()) as response:
                    if response.status_code != 200:
                        await response.aread()
                    attempts.opened(response)
                    if response.status_code == 200:
                        async for event in _async_events(response.aiter_lines(), attempts.cursor):
                            yield event
            except httpx.TransportError as error:
                attempts.failed(unreachable(error))
            await asyncio.sleep(0 if attempts.expired() else attempts.delay())


def _decode(decoder: FrameDecoder, line: str, cursor: Cursor) -> list[Event] | str:
    frame = decoder.feed(line)
    return [] if frame is None else cursor.read(frame)


def _events(lines: Iterator[str], cursor: Cursor) -> Iterator[Event]:
    decoder, cursor.held = FrameDecoder(), []  # a new connection: nothing held from the last
    for line in lines:
        got = _decode(decoder, line, cursor)
        if isinstance(got, str):  # the reconnect ask
            return
        yield from got


async def _async_events(lines: AsyncIterator[str], cursor: Cursor) -> AsyncIterator[Event]:
    decoder, cursor.held = FrameDecoder(), []
    async for line in lines:
        got = _decode(decoder, line, cursor)
        if isinstance(got, str):  # the reconnect ask
            return
        for event in got:
            yield event


class stream(Generic[P]):
    """A streaming route: the sync client gets an ``EventStream``, the async one an
    ``AsyncEventStream``, from one set of options."""

    def __init__(self, build: Callable[Concatenate[Any, P], StreamOptions]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, client: None, owner: type) -> stream[P]: ...
    @overload
    def __get__(self, client: Client, owner: type) -> Callable[P, EventStream]: ...
    @overload
    def __get__(self, client: AsyncClient, owner: type) -> Callable[P, AsyncEventStream]: ...
    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        build = self._build

        def open_stream(*args: Any, **kwargs: Any) -> Any:
            return client._stream(build(client, *args, **kwargs))

        open_stream.__doc__ = build.__doc__
        return open_stream
