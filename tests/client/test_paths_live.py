"""The clients' debug path methods against the real server over HTTP."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from cairn_client import AsyncClient, Client
from cairn_client.errors import Conflict, NotFound


async def test_the_async_client_starts_shows_and_resolves_a_path(live_url: str) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    async with AsyncClient(live_url) as cairn:
        assert await cairn.active_path(session) is None
        started = await cairn.start_path(session, "build fails on CI only", signature="E: <n>")
        assert started.path.trigger_record_id is None and started.waypoints[0].type == "error"
        with pytest.raises(Conflict):
            await cairn.start_path(session, "again")
        active = await cairn.active_path(session)
        assert active is not None and active.path.id == started.path.id
        resolved = await cairn.resolve_path(started.path.id, what_fixed_it="pin the toolchain")
        assert (resolved.path.status, resolved.path.what_fixed_it) == (
            "resolved", "pin the toolchain",
        )  # fmt: skip
        shown = await cairn.get_path(started.path.id)
        assert [w.type for w in shown.waypoints] == ["error", "resolution"]
        with pytest.raises(Conflict):
            await cairn.abandon_path(started.path.id)
        with pytest.raises(NotFound):
            await cairn.get_path(uuid.uuid4())


def _abandon_and_list(url: str, session: str) -> tuple[str, list[str], str | None]:
    with Client(url) as cairn:
        path = cairn.start_path(session, "tests hang").path
        abandoned = cairn.abandon_path(path.id, reason="out of time").path
        listed = cairn.list_paths(session=session.removeprefix("session:"), status="abandoned")
        return abandoned.status, [str(p.id) for p in listed], abandoned.abandon_reason


async def test_the_sync_client_abandons_and_lists_paths(live_url: str) -> None:
    session = f"session:{uuid.uuid4().hex[:8]}"
    status, listed, reason = await asyncio.to_thread(_abandon_and_list, live_url, session)
    assert (status, len(listed), reason) == ("abandoned", 1, "out of time")
