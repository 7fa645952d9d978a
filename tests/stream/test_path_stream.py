"""``/events/stream?paths=true`` against the real server, worker, NATS and PostgreSQL: a
scripted debugging session's path frames arrive in order, and a resumed stream replays
them from the events, neither losing nor repeating one."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from tests.assembly.helpers import post
from tests.stream.sse_client import SseReader, sse

FAILING = {
    "command": "pytest -q",
    "exit_code": 1,
    "output": "FAILED tests/test_cart.py::test_total - AssertionError: assert 3 == 4\n"
    "1 failed, 2 passed in 0.12s",
}
GREEN = {"command": "pytest -q", "exit_code": 0, "output": "3 passed in 0.10s"}
EDIT = {"tool": "edit", "text": "changed"}
SCRIPT = [("Run pytest", FAILING), ("Edit src/cart.py line 12", EDIT)]
SCRIPT += [("Run pytest", GREEN)] * 3
EXPECTED = [
    ("path_started", None),
    ("path_waypoint", "error"),
    ("path_waypoint", "attempt"),
    ("path_waypoint", "success"),
    ("path_waypoint", "success"),
    ("path_waypoint", "success"),
    ("path_waypoint", "resolution"),
    ("path_resolved", None),
]


async def _path_frames(stream: SseReader, until: str, timeout: float = 30) -> list[Any]:
    """(frame id, data) of the path frames up to the first of type ``until``."""
    frames = []
    while True:
        frame = await stream.next_frame(timeout)
        if frame["data"]["type"].startswith("path_"):
            frames.append((frame.get("id"), frame["data"]))
            if frame["data"]["type"] == until:
                return frames


async def _run_session(client: httpx.AsyncClient, stream: SseReader, tag: str) -> list[Any]:
    """Post the script one record at a time (each after the last one's waypoint arrived:
    the worker may handle a burst in any order); the path frames it made."""
    frames: list[Any] = []
    for title, context in SCRIPT:
        source = str(await post(client, schema_name="tool.response.v1", title=title,
                                tags=[tag], context=dict(context)))  # fmt: skip
        while not any(f[1].get("source_record_id") == source for f in frames):
            frames += await _path_frames(stream, "path_waypoint")
    return frames + await _path_frames(stream, "path_resolved")


def _shape(frames: list[Any]) -> list[tuple[str, str | None]]:
    return [(data["type"], data.get("waypoint_type")) for _, data in frames]


async def test_a_debugging_session_streams_its_path_and_a_resume_replays_it(
    worker: None, live_url: str, client: httpx.AsyncClient
) -> None:
    session = uuid.uuid4().hex[:8]
    params = {"session": session, "paths": "true"}
    async with sse(live_url, params) as stream:
        frames = await _run_session(client, stream, f"session:{session}")
    assert _shape(frames) == EXPECTED
    (path_id,) = {data["path_id"] for _, data in frames}
    assert all(data["session"] == f"session:{session}" for _, data in frames)
    assert [data["sequence"] for _, data in frames[1:-1]] == list(range(1, 7))
    started, resolved = frames[0][1], frames[-1][1]
    assert started["status"] == "active" and "AssertionError" in started["signature"]
    assert resolved["status"] == "resolved" and resolved["kiss_summary"].startswith("When ")
    assert "AssertionError" in resolved["root_cause"]
    assert resolved["what_fixed_it"].startswith("Edit src/cart.py line 12")
    # The session filter leaves the path's records out: each frame is alone and has its id.
    assert all(frame_id == str(data["seq"]) for frame_id, data in frames)
    seqs = [data["seq"] for _, data in frames]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    # Resume from just before the path started: the replay derives the same frames.
    headers = {"Last-Event-ID": str(seqs[0] - 1)}
    async with sse(live_url, params, headers) as stream:
        replayed = await _path_frames(stream, "path_resolved")
    assert replayed == frames
    # Resume after the first waypoint: nothing before it again.
    async with sse(live_url, params, {"Last-Event-ID": str(seqs[1])}) as stream:
        rest = await _path_frames(stream, "path_resolved")
    assert rest == frames[2:] and {data["path_id"] for _, data in rest} == {path_id}


async def test_without_paths_the_stream_sends_no_path_frames(
    live_url: str, client: httpx.AsyncClient, marker: str
) -> None:
    """A path record posted directly: its record event, and a path frame only when asked."""
    context = {
        "session": f"session:{marker}",
        "status": "active",
        "sequence": 0,
        "started_at": "2026-11-26T10:00:00+00:00",
        "trigger_record_id": str(uuid.uuid4()),
    }
    async with (
        sse(live_url, {"any_tags": marker}) as plain,
        sse(live_url, {"any_tags": marker, "paths": "true"}) as paths,
    ):
        created = await post(client, schema_name="debug.path.v1", tags=[marker], context=context)
        frame = await plain.next_frame()
        assert frame["data"]["type"] == "breadcrumb.created"
        first, second = await paths.next_frame(), await paths.next_frame()
    assert "id" not in first and first["data"]["type"] == "path_started"
    assert first["data"]["path_id"] == str(created) and first["data"]["seq"] == int(frame["id"])
    assert second["id"] == frame["id"] and second["data"] == frame["data"]
