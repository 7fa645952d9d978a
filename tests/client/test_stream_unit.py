"""The event stream's reconnects against a scripted server: resume with Last-Event-ID,
follow a reconnect ask, and never yield a sequence twice."""

from __future__ import annotations

import json

import httpx
import pytest
from cairn_client import AsyncClient, Client
from cairn_client.errors import Forbidden
from cairn_client.sse import Cursor, Frame, FrameDecoder
from tests.client.mock import Script, error


def frames(*items: tuple[int | None, dict[str, object]]) -> bytes:
    out = [": comment\n\n"]
    for seq, data in items:
        head = "" if seq is None else f"id: {seq}\n"
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def event(seq: int) -> tuple[int, dict[str, object]]:
    return seq, {"type": "breadcrumb.created", "title": f"r{seq}", "tags": ["x"]}


def stream_answer(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


def answers() -> list[httpx.Response]:
    """The first connection ends after 2; the second asks for a reconnect after 3 (the 99
    after the ask is never read); the replay then overlaps what was yielded."""
    return [
        stream_answer(frames(event(1), event(2))),
        stream_answer(
            frames(event(3), (None, {"type": "ping"}), (None, {"type": "reconnect"}), event(99))
        ),
        stream_answer(frames(event(2), event(3), event(4))),
    ]


def test_reconnects_resume_after_the_last_event_and_skip_repeats() -> None:
    script = Script(*answers())
    with Client("http://x", transport=script.sync()) as cairn:
        stream = cairn.events(any_tags=["x"], schema_name="chat.v1")
        seen = [next(stream).seq for _ in range(4)]
        stream.close()
    assert seen == [1, 2, 3, 4]
    assert [r.headers.get("last-event-id") for r in script.requests] == [None, "2", "3"]
    assert dict(script.requests[0].url.params) == {"any_tags": "x", "schema_name": "chat.v1"}


async def test_the_async_stream_behaves_the_same() -> None:
    script = Script(*answers())
    async with AsyncClient("http://x", transport=httpx.MockTransport(script)) as cairn:
        stream = cairn.events(since=0)
        seen = [(await anext(stream)).seq for _ in range(4)]
        await stream.aclose()
    assert seen == [1, 2, 3, 4]
    assert [r.headers.get("last-event-id") for r in script.requests] == ["0", "2", "3"]


def test_a_refused_stream_raises_the_servers_error() -> None:
    script = Script(error(403, "forbidden", "not yours"))
    with Client("http://x", transport=script.sync()) as cairn, pytest.raises(Forbidden):
        next(iter(cairn.events()))


def test_connection_failures_give_up_after_max_reconnects() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    script = Script(refuse)
    with Client("http://x", transport=script.sync()) as cairn:
        stream = cairn.events(max_reconnects=2)
        stream._attempts.options.backoff_s = 0.0
        with pytest.raises(Exception, match="refused"):
            next(stream)
    assert len(script.requests) == 3


def test_the_decoder_joins_data_lines_and_ignores_comments() -> None:
    decoder = FrameDecoder()
    lines = [": ping", "id: 7", 'data: {"a":', "data: 1}", ""]
    assert [decoder.feed(line) for line in lines][-1] == Frame("7", '{"a":\n1}')
    cursor = Cursor(7)
    assert cursor.read(Frame("7", '{"type": "x"}')) == []
    assert len(cursor.read(Frame("8", '{"type": "x"}'))) == 1 and cursor.last == 8


PATH_ID = "9b0e9f54-8a4e-4d43-9b0c-4a7f3f3a7a01"


def path(kind: str, seq: int, **fields: object) -> dict[str, object]:
    return {"type": kind, "path_id": PATH_ID, "seq": seq, "session": "session:s1", **fields}


def test_path_frames_are_held_for_their_events_id_and_yielded_once() -> None:
    """The first connection ends between event 2's path frame (no id) and its record frame:
    the path frame is dropped, and yielded when the resumed stream sends both again."""
    started = (None, path("path_started", 1, status="active"))
    waypoint = (None, path("path_waypoint", 2, sequence=1, waypoint_type="error"))
    resolved = (3, path("path_resolved", 3, status="resolved", kiss_summary="When x: y."))
    script = Script(
        stream_answer(frames(started, event(1), waypoint)),
        stream_answer(frames(waypoint, event(2), resolved)),
    )
    with Client("http://x", transport=script.sync()) as cairn:
        stream = cairn.events(session="s1", paths=True)
        seen = [next(stream) for _ in range(5)]
        stream.close()
    assert [(e.seq, e.type) for e in seen] == [
        (1, "path_started"),
        (1, "breadcrumb.created"),
        (2, "path_waypoint"),
        (2, "breadcrumb.created"),
        (3, "path_resolved"),
    ]
    assert seen[2].path is not None and seen[2].path.waypoint_type == "error"
    assert seen[4].path is not None and seen[4].path.kiss_summary == "When x: y."
    assert str(seen[0].path and seen[0].path.path_id) == PATH_ID and seen[1].path is None
    assert [r.headers.get("last-event-id") for r in script.requests] == [None, "1"]
    assert dict(script.requests[0].url.params) == {"session": "s1", "paths": "true"}
