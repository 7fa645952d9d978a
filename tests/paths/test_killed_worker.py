"""A real ``cairn worker`` killed with SIGKILL halfway through a session's records, then
another one finishing: the session still has one path per debugging episode, one waypoint
per record and type (its events redelivered or handled twice), numbered without gaps."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tests.paths.test_arrival_order import SCRIPT, TRACKED
from tests.paths.test_tracking import FAILING, _paths_of, _record
from tests.processes import REPO
from tests.waiting import eventually

from cairn.config import Settings

pytestmark = pytest.mark.slow

WAYPOINTS = sum(len(types) for _, types in TRACKED)
SLOW_S = 0.15  # each waypoint insert, while the test runs: a kill lands mid-session


async def _start(settings: Settings) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url or "",
        "NATS_URL": settings.nats_url or "",
        "CAIRN_EVENTS__WORKER_ACK_WAIT_S": "5",  # the killed worker's events come back soon
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cairn.cli", "worker", "--metrics-port", "0",
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def _waypoints(db: AsyncEngine, session: str) -> list[Any]:
    query = text(
        "SELECT w.id, w.context FROM breadcrumbs w JOIN breadcrumbs p"
        " ON p.id = (w.context->>'path_id')::uuid"
        " WHERE w.schema_name = 'debug.waypoint.v1' AND p.context->>'session' = :session"
    )
    async with db.connect() as connection:
        return list(await connection.execute(query, {"session": session}))


async def _tracked(db: AsyncEngine, session: str) -> list[tuple[str, list[str]]]:
    """The session's paths, earliest first: each one's status and waypoint types in order."""
    waypoints = await _waypoints(db, session)
    shape = []
    for path in sorted(await _paths_of(db, session), key=lambda p: p.context["started_at"]):
        own = [w.context for w in waypoints if w.context["path_id"] == str(path.id)]
        types = [c["type"] for c in sorted(own, key=lambda c: int(c["sequence"]))]
        shape.append((path.context["status"], types))
    return shape


@pytest.fixture
async def slow_waypoints(app: FastAPI, db: AsyncEngine) -> AsyncIterator[None]:
    suffix = uuid.uuid4().hex[:10]
    async with db.begin() as connection:
        await connection.execute(text(
            f"CREATE FUNCTION slow_{suffix}() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$ BEGIN PERFORM pg_sleep({SLOW_S}); RETURN NULL; END $$"
        ))  # fmt: skip
        await connection.execute(text(
            f"CREATE TRIGGER slow_{suffix} AFTER INSERT ON breadcrumbs FOR EACH ROW"
            f" WHEN (NEW.schema_name = 'debug.waypoint.v1') EXECUTE FUNCTION slow_{suffix}()"
        ))  # fmt: skip
    yield
    async with db.begin() as connection:
        await connection.execute(text(f"DROP TRIGGER IF EXISTS slow_{suffix} ON breadcrumbs"))
        await connection.execute(text(f"DROP FUNCTION IF EXISTS slow_{suffix}()"))


async def _consuming(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    """Until a worker handles a probe: one posted before it bound a new consumer is lost."""
    probes = f"session:{uuid.uuid4().hex[:8]}"

    async def handled() -> bool:
        if await _waypoints(db, probes):
            return True
        await _record(client, probes, dict(FAILING))
        return False

    await eventually(handled, timeout=120, interval=1.0)


@pytest.mark.usefixtures("slow_waypoints")
async def test_a_worker_killed_mid_session_leaves_one_path_and_no_duplicate(
    settings: Settings, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    first = await _start(settings)
    try:
        await _consuming(client, db)
        session = f"session:{uuid.uuid4().hex[:8]}"
        sources = [await _record(client, session, dict(context)) for context in SCRIPT]

        async def some_handled() -> bool:
            return len(await _waypoints(db, session)) >= 3

        await eventually(some_handled, timeout=120, interval=0.01)
    finally:
        first.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(first.wait(), 30) == -signal.SIGKILL
    assert len(await _waypoints(db, session)) < WAYPOINTS  # killed halfway
    second = await _start(settings)
    try:

        async def finished() -> bool:
            return await _tracked(db, session) == TRACKED

        await eventually(finished, timeout=180, interval=0.5)
    finally:
        second.terminate()
        await asyncio.wait_for(second.wait(), 30)
    paths = sorted(await _paths_of(db, session), key=lambda p: p.context["started_at"])
    assert [p.context["status"] for p in paths] == ["resolved", "active"]
    waypoints = await _waypoints(db, session)
    assert len(waypoints) == WAYPOINTS
    per_record = Counter((w.context["source_record_id"], w.context["type"]) for w in waypoints)
    assert set(per_record.values()) == {1}
    assert {w.context["source_record_id"] for w in waypoints} <= set(sources)
    for path in paths:
        numbers = sorted(w.context["sequence"] for w in waypoints
                         if w.context["path_id"] == str(path.id))  # fmt: skip
        assert numbers == list(range(1, path.context["sequence"] + 1))
    assert paths[0].context["trigger_record_id"] == sources[0]
