"""The client's event stream against the real server and NATS."""

from __future__ import annotations

import asyncio
import itertools
import uuid

from cairn_client import AsyncClient, Client, Event


async def _post_until(
    cairn: AsyncClient, marker: str, done: asyncio.Future[object]
) -> list[uuid.UUID]:
    """Post a record every 0.2 s until ``done`` (a stream that connects late still sees
    one); the ids in the order posted."""
    posted = []
    while not done.done():
        posted.append((await cairn.create_breadcrumb("ping", {}, tags=[marker])).id)
        await asyncio.wait([done], timeout=0.2)
    return posted


async def test_a_resumed_stream_gets_exactly_the_events_missed(live_url: str, marker: str) -> None:
    async with AsyncClient(live_url) as cairn:
        stream = cairn.events(any_tags=[marker], stop_after_s=20)
        first = asyncio.ensure_future(anext(stream))
        pings = await _post_until(cairn, marker, first)
        seen: Event = first.result()
        await stream.aclose()
        missed = [(await cairn.create_breadcrumb("missed", {}, tags=[marker])).id for _ in "abc"]
        # Everything posted after `seen`: pings that were on their way, then the three.
        expected = pings[pings.index(seen.breadcrumb_id) + 1 :] + missed
        resumed = cairn.events(any_tags=[marker], since=seen.seq, stop_after_s=3)
        events = [event async for event in resumed]
    assert [event.breadcrumb_id for event in events] == expected
    assert all(event.seq > seen.seq for event in events)


def _first_event(url: str, marker: str) -> list[Event]:
    with Client(url) as cairn:
        return list(itertools.islice(cairn.events(any_tags=[marker], stop_after_s=20), 1))


async def test_the_sync_stream_yields_a_live_event(live_url: str, marker: str) -> None:
    async with AsyncClient(live_url) as cairn:
        reading = asyncio.ensure_future(asyncio.to_thread(_first_event, live_url, marker))
        await _post_until(cairn, marker, reading)
    (event,) = reading.result()
    assert event.type == "breadcrumb.created" and marker in event.tags and event.seq > 0


async def test_the_stream_yields_path_frames_when_asked(live_url: str, marker: str) -> None:
    """A path record posted directly makes a ``path_started`` frame before its record event."""
    context = {
        "session": f"session:{marker}",
        "status": "active",
        "sequence": 0,
        "started_at": "2026-11-26T10:00:00+00:00",
        "trigger_record_id": str(uuid.uuid4()),
    }
    async with AsyncClient(live_url) as cairn:
        stream = cairn.events(any_tags=[marker], paths=True, stop_after_s=20)
        first = asyncio.ensure_future(anext(stream))
        posted = []
        while not first.done():  # (until the stream is connected)
            created = await cairn.create_breadcrumb(
                "path", context, schema_name="debug.path.v1", tags=[marker]
            )
            posted.append(created.id)
            await asyncio.wait([first], timeout=0.5)
        started, record = first.result(), await anext(stream)
        await stream.aclose()
    assert started.type == "path_started" and started.path is not None
    assert started.path.path_id in posted and started.path.status == "active"
    assert record.type == "breadcrumb.created" and record.breadcrumb_id == started.path.path_id
    assert started.seq == record.seq
