"""An explicit start, resolve and abandon stream the same path frames as a detected path's
(``/events/stream?paths=true``, against the real server, NATS and PostgreSQL)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from tests.stream.sse_client import SseReader, sse


async def _frames_until(stream: SseReader, last: str) -> list[dict[str, Any]]:
    frames = []
    while True:
        data = (await stream.next_frame(30))["data"]
        if data["type"].startswith("path_"):
            frames.append(data)
            if data["type"] == last:
                return frames


async def test_explicit_operations_stream_their_path_frames(live_url: str) -> None:
    session = uuid.uuid4().hex[:8]
    async with (
        httpx.AsyncClient(base_url=live_url) as client,
        sse(live_url, {"session": session, "paths": "true"}) as stream,
    ):
        body = {"session": session, "summary": "the export hangs"}
        first = (await client.post("/paths", json=body)).json()["path"]
        await client.post(f"/paths/{first['id']}/resolve", json={"what_fixed_it": "stream it"})
        resolved = await _frames_until(stream, "path_resolved")
        second = (await client.post("/paths", json=body)).json()["path"]
        await client.post(f"/paths/{second['id']}/abandon", json={"reason": "later"})
        abandoned = await _frames_until(stream, "path_abandoned")
    shape = [(f["type"], f.get("waypoint_type")) for f in resolved]
    assert shape == [
        ("path_started", None), ("path_waypoint", "error"),
        ("path_waypoint", "resolution"), ("path_resolved", None),
    ]  # fmt: skip
    assert {f["path_id"] for f in resolved} == {first["id"]}
    assert resolved[-1]["what_fixed_it"] == "stream it"
    assert [f["type"] for f in abandoned] == ["path_started", "path_waypoint", "path_abandoned"]
    assert {f["path_id"] for f in abandoned} == {second["id"]}
